import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import PushGateway

@Suite("The route table: one declaration per route, read by the router and the metrics")
struct GatewayRouteTableTests {
    static func gateway() throws -> TestGateway {
        try TestGateway(logger: Logger(level: .error), listening: false)
    }

    @Test("no two routes share a path or a label, whatever their listener")
    func pathsAndLabelsAreUnique() {
        #expect(Set(GatewayRoute.allCases.map(\.path)).count == GatewayRoute.allCases.count)
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
            #expect(routes.map(\.label) == declared.map(\.rawValue))
            let router = Router(routes)
            for route in declared {
                let declaration = route.declaration
                let headers = HTTPHeaders(declaration.requiresJSON ? [("Content-Type", "application/json")] : [])
                let head = RequestHead(method: declaration.method, target: declaration.path, headers: headers)
                guard case .handle(let routed) = router.decide(head) else {
                    Issue.record("\(route) is not routed on its listener")
                    continue
                }
                #expect(routed.label == route.rawValue)
                #expect(routed.runsOnEventLoop == (declaration.execution == .eventLoop))
                #expect(router.bodyLimit(forPath: declaration.path) == declaration.bodyLimit)
                let otherMethod = RequestHead(
                    method: declaration.method == "GET" ? "POST" : "GET", target: declaration.path, headers: headers)
                guard case .reject(let response, let label) = router.decide(otherMethod) else {
                    Issue.record("\(route) accepts a second method")
                    continue
                }
                #expect(response.status == 405)
                #expect(label == route.rawValue)
            }
            for other in GatewayRoute.allCases where other.declaration.listener != listener {
                guard case .reject(let response, _) = router.decide(RequestHead(method: "GET", target: other.path))
                else {
                    Issue.record("\(other) is routed on the \(listener.rawValue) listener")
                    continue
                }
                #expect(response.status == 404)
            }
        }
    }

    @Test(
        "only the challenge and liveness routes run on the event loop; only enrollment and batches take a larger body"
    )
    func executionAndLimits() {
        #expect(GatewayRoute.allCases.filter { $0.declaration.execution == .eventLoop } == [.challenges, .liveness])
        #expect(GatewayRoute.enroll.declaration.bodyLimit == 23896)
        #expect(GatewayRoute.batchDeliveries.declaration.bodyLimit == 65536)
        #expect(
            GatewayRoute.allCases.filter { $0.declaration.bodyLimit != Router.defaultBodyLimit }
                == [.batchDeliveries, .enroll])
    }
}
