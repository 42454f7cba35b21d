import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import GatewayConfiguration
@testable import PushGateway

@Suite("The route table: one declaration per route, read by the router and the metrics")
struct GatewayRouteTableTests {
    static func gateway() throws -> TestGateway {
        try TestGateway(logger: Logger(level: .error), listening: false)
    }

    @Test("no two routes share a path or a label, whatever their listener")
    func pathsAndLabelsAreUnique() {
        let paths = GatewayRoute.allCases.flatMap(\.declaration.paths)
        #expect(Set(paths).count == paths.count)
        #expect(Set(GatewayRoute.allCases.map(\.rawValue)).count == GatewayRoute.allCases.count)
        #expect(Set(GatewayRoute.allCases.map(\.rawValue)).isDisjoint(with: [Router.unknownLabel]))
    }

    @Test("each listener routes exactly its declared routes, with their method, label, body limit and thread")
    func routerFollowsTheDeclarations() throws {
        let gateway = try Self.gateway()
        for listener in HTTPListener.allCases {
            let declared = GatewayRoute.served(by: listener)
            #expect(!declared.isEmpty)
            let routes = gateway.application.routes(on: listener)
            #expect(routes.map(\.path) == declared.flatMap(\.declaration.paths))
            let router = Router(routes)
            for route in declared {
                for path in route.declaration.paths {
                    check(route, path: path, router: router)
                }
            }
            for other in GatewayRoute.allCases where other.declaration.listener != listener {
                for path in other.declaration.paths {
                    guard case .reject(let response, _) = router.decide(RequestHead(method: "GET", target: path))
                    else {
                        Issue.record("\(other) is routed on the \(listener.rawValue) listener")
                        continue
                    }
                    #expect(response.status == 404)
                }
            }
        }
    }

    /// One path of `route`: routed under the route's label, method, thread and body limit.
    private func check(_ route: GatewayRoute, path: String, router: Router) {
        let declaration = route.declaration
        let headers = HTTPHeaders(declaration.requiresJSON ? [("Content-Type", "application/json")] : [])
        let head = RequestHead(method: declaration.method, target: path, headers: headers)
        guard case .handle(let routed) = router.decide(head) else {
            Issue.record("\(route) is not routed on \(path)")
            return
        }
        #expect(routed.label == route.rawValue)
        #expect(routed.runsOnEventLoop == (declaration.execution == .eventLoop))
        #expect(router.bodyLimit(forPath: path) == declaration.bodyLimit)
        let otherMethod = RequestHead(
            method: declaration.method == "GET" ? "POST" : "GET", target: path, headers: headers)
        guard case .reject(let response, let label) = router.decide(otherMethod) else {
            Issue.record("\(route) accepts a second method on \(path)")
            return
        }
        #expect(response.status == 405)
        #expect(label == route.rawValue)
    }

    @Test("the delivery routes answer on their /apns path and on the platform-neutral one, under one label each")
    func deliveryRoutesHaveTwoPaths() {
        #expect(GatewayRoute.deliveries.declaration.paths == ["/v1/deliveries/apns", "/v1/deliveries"])
        #expect(
            GatewayRoute.batchDeliveries.declaration.paths == ["/v1/deliveries/apns/batch", "/v1/deliveries/batch"])
        #expect(GatewayRoute.allCases.filter { $0.declaration.paths.count > 1 } == [.deliveries, .batchDeliveries])
    }

    @Test("the /apns paths take only ios grants; the platform-neutral paths take every platform")
    func apnsPathsRequireIOS() {
        #expect(GatewayRoute.requiredPlatform(onPath: "/v1/deliveries/apns") == .ios)
        #expect(GatewayRoute.requiredPlatform(onPath: "/v1/deliveries/apns/batch") == .ios)
        #expect(GatewayRoute.requiredPlatform(onPath: "/v1/deliveries") == nil)
        #expect(GatewayRoute.requiredPlatform(onPath: "/v1/deliveries/batch") == nil)
        #expect(AppProfile.Platform.admits(.ios, required: .ios))
        #expect(!AppProfile.Platform.admits(.android, required: .ios))
        #expect(AppProfile.Platform.admits(.ios, required: nil))
        #expect(AppProfile.Platform.admits(.android, required: nil))
    }

    @Test(
        "only the challenge, liveness and metrics routes run on the event loop; only the enrollments and batches take a larger body"
    )
    func executionAndLimits() {
        #expect(
            GatewayRoute.allCases.filter { $0.declaration.execution == .eventLoop } == [
                .challenges, .liveness, .metrics,
            ])
        #expect(GatewayRoute.enroll.declaration.bodyLimit == 23896)
        #expect(GatewayRoute.enrollAndroid.declaration.bodyLimit == 32768)
        #expect(GatewayRoute.batchDeliveries.declaration.bodyLimit == 65536)
        #expect(
            GatewayRoute.allCases.filter { $0.declaration.bodyLimit != Router.defaultBodyLimit }
                == [.batchDeliveries, .enroll, .enrollAndroid])
    }
}
