// swift-tools-version:6.0
import PackageDescription

// One C library → one system-library target → exactly one Swift module that imports it
//: CLibPQ→PushPostgres, COpenSSL→PushCrypto,
// CNghttp2→PushHTTP2 (client and server sessions), CSecp256k1→PushNostr, CCurl→PushCurl.
let package = Package(
    name: "push-gateway",
    // For PushGatewayClient in an app (async URLSession); the server builds on Linux only.
    platforms: [.iOS(.v15), .macOS(.v12)],
    products: [
        .executable(name: "push-gateway", targets: ["push-gateway"]),
        // The client for iOS apps (docs/ios-integration.md): Foundation only, so it builds in an app and
        // is tested here on Linux (docs/decisions/0370).
        .library(name: "PushGatewayClient", targets: ["PushGatewayClient"]),
    ],
    targets: [
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNghttp2", pkgConfig: "libnghttp2", providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CSecp256k1", pkgConfig: "libsecp256k1", providers: [.apt(["libsecp256k1-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // Linux-only interfaces (epoll, eventfd) the Glibc module does not export; used by PushSystem only.
        .systemLibrary(name: "CPushSystem"),

        // The code type every module's one error struct shares (docs/decisions/0540); no dependency.
        .target(name: "PushErrors"),
        .target(name: "PushSystem", dependencies: ["CPushSystem", "PushErrors"]),
        .target(name: "PushJSON", dependencies: ["PushErrors"]),
        // docs/protocol.md's words both ends use; imports nothing, so an app links it (docs/decisions/0370).
        .target(name: "PushWire"),
        // No C library and nothing of the gateway's but PushWire: an app links it (docs/decisions/0370).
        .target(name: "PushGatewayClient", dependencies: ["PushWire"]),
        // Strict DER (X.690 §10), shared by App Attest's nonce extension and Android Key Attestation, and
        // the writer the demo and the tests build KeyDescriptions with (docs/decisions/0780).
        .target(name: "PushDER", dependencies: ["PushErrors"]),
        // Metric families and the Prometheus text exposition, with no knowledge of the gateway.
        .target(name: "PushMetrics", dependencies: ["PushSystem"]),
        .target(name: "PushHTTP", dependencies: ["PushErrors", "PushSystem", "PushWire"]),
        // Token buckets per key, bounded in memory (docs/decisions/0210, 0231).
        .target(name: "PushRateLimiting"),
        .target(name: "PushCrypto", dependencies: ["COpenSSL", "PushErrors", "PushSystem"]),
        .target(name: "PushAttest", dependencies: ["PushCrypto", "PushDER", "PushErrors", "PushJSON"]),
        // Android Key Attestation verification (docs/protocol.md §5a), pure Swift over PushCrypto.
        .target(
            name: "PushKeyAttestation", dependencies: ["PushCrypto", "PushDER", "PushErrors", "PushJSON", "PushSystem"]),
        .target(name: "PushNostr", dependencies: ["CSecp256k1", "PushCrypto", "PushErrors", "PushJSON"]),
        .target(name: "PushPostgres", dependencies: ["CLibPQ", "PushErrors", "PushSystem"]),
        // Marmot Push v1 (docs/protocol.md §13): token and trigger decoding and the relay session, pure.
        .target(
            name: "PushMarmot",
            dependencies: ["PushNostr", "PushErrors", "PushCrypto", "PushJSON", "PushMetrics", "PushSystem"]),
        // RFC 6455 client connection as a pure state machine (docs/decisions/0390).
        .target(name: "PushWebSocket", dependencies: ["PushCrypto", "PushErrors", "PushSystem"]),
        // A client's stream: TCP connect, the proxy's CONNECT tunnel, the TLS handshake (docs/decisions/0814).
        .target(name: "PushDial", dependencies: ["PushCrypto", "PushSystem"]),
        .target(name: "PushHTTP2", dependencies: ["CNghttp2", "PushCrypto", "PushDial", "PushErrors", "PushSystem"]),
        // The provider-neutral push interface (docs/protocol.md §4.7): APNs and FCM implement it.
        .target(name: "PushDelivery"),
        .target(
            name: "PushAPNs",
            dependencies: ["PushDelivery", "PushErrors", "PushHTTP2", "PushCrypto", "PushJSON", "PushSystem"]),
        // FCM HTTP v1 and its OAuth access token (docs/protocol.md §8a), a PushProvider.
        .target(
            name: "PushFCM",
            dependencies: ["PushDelivery", "PushErrors", "PushHTTP2", "PushCrypto", "PushJSON", "PushSystem"]),
        // Web Push (docs/protocol.md §8b): the subscription endpoint and the address rule, pure.
        .target(
            name: "PushWebPush", dependencies: ["PushCrypto", "PushCurl", "PushDelivery", "PushJSON", "PushSystem"]),
        // The APNs stand-in for apns-mock and the tests; never linked into push-gateway.
        .target(name: "APNsMock", dependencies: ["PushHTTP2", "PushHTTP", "PushCrypto", "PushJSON", "PushSystem"]),
        // The FCM and Google-token stand-in for fcm-mock and the tests, served by APNsMock's server;
        // never linked into push-gateway.
        .target(name: "FCMMock", dependencies: ["APNsMock", "PushHTTP2", "PushCrypto", "PushJSON", "PushSystem"]),
        // The local Web Push service for webpush-mock and the tests (docs/decisions/0800), served by
        // APNsMock's server over h2 and HTTP/1.1; never linked into push-gateway.
        .target(
            name: "WebPushMock", dependencies: ["APNsMock", "PushWebPush", "PushCrypto", "PushJSON", "PushSystem"]),
        // The one module importing libcurl: blocking transfers and the asynchronous multi client.
        .target(name: "PushCurl", dependencies: ["CCurl", "PushErrors", "PushSystem"]),
        .target(name: "PushRelayClient", dependencies: ["PushCurl", "PushErrors", "PushNostr", "PushCrypto"]),
        // The Marmot mode's I/O and ingress (docs/protocol.md §13): WebSocket and relay drivers on an
        // event loop, the trigger steps, the digest table, dispatch through PushDelivery's providers.
        .target(
            name: "MarmotIngress",
            dependencies: [
                "PushMarmot", "PushWebSocket", "PushNostr", "PushCrypto", "PushDial", "PushSystem", "PushDelivery",
                "PushPostgres", "PushRateLimiting",
            ]
        ),
        // The gateway's own modules, lowest first (docs/architecture.md): each reads only those above it.
        // The environment, the app profiles, the keyring and check-config's problems (docs/protocol.md §11).
        .target(
            name: "GatewayConfiguration",
            dependencies: [
                "PushErrors", "PushSystem", "PushCrypto", "PushNostr", "PushPostgres", "PushKeyAttestation",
                "PushDelivery", "PushMarmot", "PushMetrics", "PushWebSocket", "PushWebPush",
            ]
        ),
        // The gateway's own sealed artifacts: grants, sealed envelopes, endpoint fingerprints, challenges.
        .target(
            name: "GatewayCredentials", dependencies: ["GatewayConfiguration", "PushCrypto", "PushErrors", "PushJSON"]),
        // The HTTP API as declared: the route table, the listeners and the request bodies, parsed (pure).
        .target(
            name: "GatewayAPI",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "PushAttest", "PushCrypto", "PushErrors",
                "PushHTTP", "PushJSON", "PushMetrics", "PushNostr",
            ]
        ),
        // The gateway's metric families and labels (docs/protocol.md §9) and the readiness they report.
        .target(
            name: "GatewayMetrics",
            dependencies: [
                "GatewayAPI", "GatewayConfiguration", "PushDelivery", "PushHTTP", "PushKeyAttestation",
                "PushMarmot", "PushMetrics", "PushPostgres", "PushSystem",
            ]
        ),
        // The delivery core (docs/protocol.md §4.7, §4.8) without HTTP: pipeline, ledger, results.
        .target(
            name: "GatewayDelivery",
            dependencies: [
                "GatewayAPI", "GatewayConfiguration", "GatewayCredentials", "GatewayMetrics", "PushDelivery",
                "PushErrors", "PushJSON", "PushNostr", "PushPostgres", "PushRateLimiting", "PushSystem",
            ]
        ),
        // The installation lifecycle core (docs/protocol.md §4–§5a): the store, device proofs, Android
        // enrollment's checks, the App Attest root.
        .target(
            name: "GatewayLifecycle",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "PushAttest", "PushCrypto", "PushErrors", "PushHTTP",
                "PushHTTP2", "PushJSON", "PushKeyAttestation", "PushMetrics", "PushPostgres", "PushRelayClient",
                "PushSystem", "PushWire",
            ]
        ),
        // The HTTP adapters (routes), the reaper, the schema check and the composition root.
        .target(
            name: "PushGateway",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "GatewayAPI", "GatewayMetrics", "GatewayDelivery",
                "GatewayLifecycle", "PushErrors", "PushSystem", "PushHTTP", "PushJSON", "PushCrypto", "PushAttest",
                "PushNostr", "PushPostgres", "PushHTTP2", "PushAPNs", "PushDelivery", "PushFCM", "PushMetrics",
                "PushRateLimiting", "PushKeyAttestation", "MarmotIngress", "PushMarmot", "PushWire", "PushWebPush",
                "PushCurl",
            ]
        ),
        // The subcommands of docs/protocol.md §12 (docs/decisions/0231).
        .target(
            name: "PushGatewayCommands",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "GatewayAPI",
                "PushGateway", "PushDelivery", "PushSystem", "PushJSON", "PushCrypto", "PushAttest",
                "PushKeyAttestation", "PushNostr", "PushPostgres", "PushRelayClient", "PushMarmot",
            ]
        ),
        .executableTarget(name: "push-gateway", dependencies: ["PushGatewayCommands"]),
        // Test-only stand-in for FCM and Google's token endpoint (docs/decisions/0412); never shipped.
        .executableTarget(name: "fcm-mock", dependencies: ["APNsMock", "FCMMock", "PushFCM", "PushSystem"]),
        .executableTarget(name: "apns-mock", dependencies: ["APNsMock", "PushCrypto", "PushSystem"]),
        // Test and development stand-in for a Web Push service (docs/decisions/0800); never shipped.
        .executableTarget(name: "webpush-mock", dependencies: ["APNsMock", "WebPushMock", "PushSystem"]),
        // Development tool for scripts/run-local and scripts/demo; never shipped (it links PushTestSupport).
        .executableTarget(
            name: "push-gateway-demo",
            dependencies: ["PushAttest", "PushCrypto", "PushDER", "PushNostr", "PushRelayClient", "PushTestSupport"]
        ),
        // Development tool for docs/performance.md's Marmot figures; never shipped.
        .executableTarget(
            name: "marmot-bench",
            dependencies: ["MarmotIngress", "PushMarmot", "PushNostr", "PushCrypto", "PushDelivery", "PushSystem"]),
        .executableTarget(name: "apns-bench", dependencies: ["PushAPNs", "PushHTTP2", "PushSystem"]),
        // Development tool for scripts/bench-fcm; never shipped.
        // Development tool for docs/performance.md's Web Push figure; never shipped (it links PushTestSupport).
        .executableTarget(
            name: "webpush-bench",
            dependencies: ["PushCrypto", "PushCurl", "PushSystem", "PushTestSupport", "PushWebPush"]),
        .executableTarget(name: "fcm-bench", dependencies: ["PushFCM", "PushDelivery", "PushHTTP2", "PushSystem"]),
        // Development tool for scripts/bench-deliveries: the delivery's floor, timed in process.
        .executableTarget(
            name: "delivery-floor",
            dependencies: ["PushAPNs", "PushCrypto", "PushHTTP", "PushHTTP2", "PushNostr", "PushSystem"]),
        // Development tool for scripts/bench-deliveries; never shipped (it links PushTestSupport).
        .executableTarget(
            name: "delivery-bench",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "GatewayAPI", "GatewayDelivery",
                "PushGateway", "PushGatewayCommands", "PushPostgres", "PushNostr", "PushCrypto", "PushSystem",
                "PushTestSupport",
            ]
        ),
        // Fuzz targets: a corpus replayer in the normal build, libFuzzer-driven when scripts/fuzz builds it
        // (never shipped).
        .executableTarget(
            name: "push-fuzz",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials",
                "PushHTTP", "PushJSON", "PushCrypto", "PushDER", "PushAttest", "PushKeyAttestation", "PushNostr",
                "PushGateway", "PushMarmot", "PushWebSocket", "PushSystem",
            ],
            path: "Fuzz/Sources/push-fuzz"
        ),

        // Test-only (the in-process TestGateway links PushGateway); never linked into push-gateway.
        .target(
            name: "PushTestSupport",
            dependencies: [
                "GatewayConfiguration",
                "PushCrypto", "PushDER", "PushDelivery", "PushSystem", "PushPostgres", "PushHTTP", "PushGateway",
                "PushKeyAttestation", "PushJSON",
            ],
            path: "Tests/PushTestSupport"
        ),
        .testTarget(
            name: "PushWebPushTests",
            dependencies: ["PushWebPush", "PushCrypto", "PushCurl", "PushDelivery", "PushSystem", "PushTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "WebPushMockTests",
            dependencies: [
                "WebPushMock", "APNsMock", "PushWebPush", "PushCrypto", "PushCurl", "PushDelivery", "PushJSON",
                "PushSystem", "PushTestSupport",
            ]),
        .testTarget(name: "PushCurlTests", dependencies: ["APNsMock", "PushCurl", "PushSystem", "PushTestSupport"]),
        .testTarget(name: "PushSystemTests", dependencies: ["PushSystem", "PushTestSupport"]),
        .testTarget(name: "PushHTTPTests", dependencies: ["PushHTTP", "PushSystem", "PushTestSupport", "PushWire"]),
        .testTarget(name: "PushHTTP2Tests", dependencies: ["PushCrypto", "PushHTTP2", "PushSystem"]),
        .testTarget(name: "PushJSONTests", dependencies: ["PushJSON"], resources: [.copy("Fixtures")]),
        .testTarget(name: "PushCryptoTests", dependencies: ["PushCrypto", "PushJSON", "PushSystem"]),
        .testTarget(name: "PushDialTests", dependencies: ["PushCrypto", "PushDial", "PushSystem"]),
        .testTarget(name: "PushDERTests", dependencies: ["PushDER"]),
        .testTarget(
            name: "PushKeyAttestationTests",
            dependencies: [
                "PushKeyAttestation", "PushDER", "PushCrypto", "PushJSON", "PushGatewayCommands", "PushTestSupport",
            ],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "PushAttestTests",
            dependencies: ["PushAttest", "PushCrypto", "PushJSON", "PushTestSupport"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "PushNostrTests", dependencies: ["PushNostr", "PushCrypto", "PushJSON", "PushTestSupport"],
            resources: [.copy("Fixtures")]),
        .testTarget(
            name: "PushAPNsTests",
            dependencies: [
                "PushAPNs", "PushDelivery", "PushHTTP2", "APNsMock", "PushCrypto", "PushSystem", "PushTestSupport",
            ]),
        .testTarget(
            name: "PushGatewayClientTests",
            dependencies: [
                "GatewayCredentials", "PushGatewayClient", "PushTestSupport", "PushCrypto", "PushNostr", "PushGateway",
            ]),
        .testTarget(
            name: "PushFCMTests",
            dependencies: [
                "PushFCM", "PushDelivery", "FCMMock", "PushHTTP2", "PushCrypto", "PushJSON", "PushSystem",
                "PushTestSupport",
            ]),
        .testTarget(name: "PushPostgresTests", dependencies: ["PushPostgres", "PushSystem", "PushTestSupport"]),
        .testTarget(
            name: "PushMarmotTests",
            dependencies: [
                "GatewayConfiguration",
                "PushMarmot", "PushNostr", "PushCrypto", "PushJSON", "PushSystem", "PushTestSupport", "MarmotIngress",
                "PushDelivery", "PushPostgres", "PushWebSocket", "PushMetrics", "PushGateway", "PushGatewayCommands",
                "APNsMock", "FCMMock", "PushHTTP2",
            ]),
        .testTarget(name: "PushWebSocketTests", dependencies: ["PushWebSocket", "PushCrypto"]),
        .testTarget(name: "PushRateLimitingTests", dependencies: ["PushRateLimiting"]),
        .testTarget(name: "PushMetricsTests", dependencies: ["PushMetrics", "PushTestSupport"]),
        // The Gateway* modules' unit tests, one target each: no PostgreSQL, no process, no TestGateway.
        .testTarget(
            name: "GatewayConfigurationTests",
            dependencies: ["GatewayConfiguration", "PushCrypto", "PushSystem", "PushTestSupport"]),
        .testTarget(
            name: "GatewayCredentialsTests",
            dependencies: ["GatewayConfiguration", "GatewayCredentials", "PushCrypto", "PushTestSupport"]),
        .testTarget(name: "GatewayAPITests", dependencies: ["GatewayAPI", "GatewayConfiguration", "PushHTTP"]),
        .testTarget(
            name: "GatewayMetricsTests",
            dependencies: [
                "GatewayAPI", "GatewayMetrics", "PushDelivery", "PushHTTP", "PushMetrics", "PushPostgres",
                "PushTestSupport",
            ]),
        .testTarget(
            name: "GatewayDeliveryTests",
            dependencies: [
                "GatewayAPI", "GatewayConfiguration", "GatewayCredentials", "GatewayDelivery", "GatewayMetrics",
                "PushDelivery", "PushMetrics", "PushNostr", "PushPostgres", "PushRateLimiting", "PushSystem",
                "PushTestSupport",
            ]),
        .testTarget(
            name: "GatewayLifecycleTests",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "GatewayLifecycle", "PushAttest", "PushCrypto",
                "PushDelivery", "PushHTTP", "PushMetrics", "PushPostgres", "PushSystem", "PushTestSupport",
            ]),
        // PushGateway's unit tests and its in-process gateway on loopback: no PostgreSQL, no child process.
        .testTarget(
            name: "PushGatewayTests",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "GatewayAPI", "GatewayDelivery", "PushGateway",
                "PushGatewayCommands", "PushRateLimiting", "PushSystem", "PushTestSupport", "PushWebPush",
                "PushDelivery", "PushCrypto",
            ]),
        .testTarget(
            name: "PushGatewayCommandsTests",
            dependencies: [
                "GatewayConfiguration", "PushGatewayCommands", "PushGateway", "PushAttest", "PushCrypto",
                "PushTestSupport",
            ]),
        // The gateway with its parts running: PostgreSQL, serve/migrate/apns-mock processes, pgbouncer,
        // nginx, Prometheus and helm (tagged .postgres, .process, .external, .slow; see PushTestSupport).
        .testTarget(
            name: "PushGatewayIntegrationTests",
            dependencies: [
                "GatewayConfiguration", "GatewayCredentials", "GatewayAPI", "GatewayMetrics", "GatewayDelivery",
                "GatewayLifecycle",
                "PushGateway", "PushGatewayCommands", "APNsMock", "PushDelivery", "PushMetrics", "PushRateLimiting",
                "PushTestSupport", "push-gateway-demo", "delivery-bench", "MarmotIngress", "PushMarmot", "FCMMock",
                "PushFCM", "PushAPNs", "WebPushMock", "PushWebPush",
            ]),
        // The docs, the deploy files and the iOS guide read against the code.
        .testTarget(
            name: "PushGatewayDocsTests",
            dependencies: [
                "GatewayAPI", "GatewayConfiguration", "PushCrypto", "PushDelivery", "PushGateway",
                "PushGatewayCommands", "PushKeyAttestation", "PushMetrics", "PushTestSupport",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
