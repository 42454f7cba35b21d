import PushHTTP
import PushSystem
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import PushGateway

@Suite("The routes each listener serves: exactly those the route table declares for it", .testBodyThreads)
struct GatewayRouterTests {
    static func gateway() throws -> TestGateway {
        try TestGateway(logger: Logger(level: .error), listening: false)
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
}
