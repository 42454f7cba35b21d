import PushHTTP
import Testing

@testable import GatewayAPI
@testable import GatewayConfiguration

@Suite("The route table: one declaration per route, read by the router and the metrics")
struct GatewayRouteTableTests {
    @Test("no two routes share a path or a label, whatever their listener")
    func pathsAndLabelsAreUnique() {
        let paths = GatewayRoute.allCases.flatMap(\.declaration.paths)
        #expect(Set(paths).count == paths.count)
        #expect(Set(GatewayRoute.allCases.map(\.rawValue)).count == GatewayRoute.allCases.count)
        #expect(Set(GatewayRoute.allCases.map(\.rawValue)).isDisjoint(with: [Router.unknownLabel]))
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
