import Foundation
import PushTestSupport
import Testing

@testable import GatewayAPI
@testable import PushGateway

/// Runs Python with the PyPI packages of Tests/requirements.txt: `openapi-spec-validator` checks the
/// document against the OpenAPI 3.1 meta-schema, `schemathesis` sends generated requests (valid and
/// deliberately invalid ones) to a live gateway and checks every answer against the document.
enum OpenAPIPython {
    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/openapi.yaml")

    /// Validates the document and prints `{path: {method: [status, …]}}` as JSON.
    static let validator = #"""
        import json, sys
        from openapi_spec_validator import validate
        from openapi_spec_validator.readers import read_from_filename

        spec, _ = read_from_filename(sys.argv[1])
        validate(spec)
        print(json.dumps({path: {method: sorted(operation["responses"]) for method, operation in item.items()}
                          for path, item in spec["paths"].items()}))
        """#

    /// The schemathesis command line, from its Python module (pip may put no script on PATH).
    static let schemathesis = """
        import sys
        from schemathesis.cli import schemathesis
        sys.argv[0] = "schemathesis"
        sys.exit(schemathesis())
        """

    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        // schemathesis and hypothesis keep caches under the working directory: not the repository.
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let result = try PythonProcess.run(
            arguments, standardError: .mergedIntoOutput, environment: ["NO_COLOR": "1"], workingDirectory: scratch)
        return (result.status, String(decoding: result.output, as: UTF8.self))
    }
}

@Suite(
    "docs/openapi.yaml is valid and the public routes answer as it says", .tags(.postgres, .process, .external),
    .testBodyThreads)
struct OpenAPITests {
    @Test("the document is valid OpenAPI 3.1 and lists exactly the public routes with their statuses")
    func documentIsValid() throws {
        let result = try OpenAPIPython.run(["-c", OpenAPIPython.validator, OpenAPIPython.document.path])
        try #require(result.status == 0, "\(result.output)")
        let paths = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: [String: [String]]])
        let gateway = try DeliveryTestGateway()
        let routes = gateway.server.application.routes(on: .publicListener)
        #expect(Set(paths.keys) == Set(routes.map(\.path)))
        for route in routes {
            let statuses = try #require(paths[route.path]?[route.method.lowercased()], "\(route.path)")
            // docs/protocol.md §1: every route can answer these.
            for common in ["400", "408", "411", "413", "503"] {
                #expect(statuses.contains(common), "\(route.path) \(common)")
            }
        }
        #expect(
            paths[GatewayRoute.deliveries.path]?["post"] == [
                "200", "400", "401", "404", "408", "410", "411", "413", "429", "503",
            ])
        #expect(
            paths[GatewayRoute.batchDeliveries.path]?["post"] == [
                "200", "400", "401", "408", "411", "413", "429", "503",
            ])
        // docs/protocol.md §4.7, §4.8: the two paths of a delivery route answer alike.
        for route in [GatewayRoute.deliveries, .batchDeliveries] {
            #expect(Set(route.declaration.paths.map { paths[$0]?["post"] }).count == 1, "\(route)")
        }
        #expect(paths[GatewayRoute.challenges.path]?["post"] == ["200", "400", "408", "411", "413", "429", "503"])
        // docs/protocol.md §1: the lifecycle bucket.
        for route in [
            GatewayRoute.enroll, .enrollAndroid, .delegate, .rotateEndpoint, .revokeDelegation, .revokeInstallation,
        ] {
            #expect(paths[route.path]?["post"]?.contains("429") == true, "\(route.path)")
        }
    }

    @Test("schemathesis finds no server error and no undocumented status, content type or body")
    func schemathesisConformance() throws {
        let gateway = try DeliveryTestGateway()
        let result = try OpenAPIPython.run([
            "-c", OpenAPIPython.schemathesis, "run", OpenAPIPython.document.path,
            "--url", "http://127.0.0.1:\(gateway.port)",
            "--checks",
            "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
            // The examples and the coverage phase (every boundary of every documented constraint, each
            // member missing or of a wrong type, other methods and content types) are deterministic;
            // a short random fuzzing phase (15 cases per operation, seeded) adds generated bodies
            // beyond them. A long fuzzing run (max-examples 40, a minute on a shared machine) found
            // nothing more.
            "--phases", "examples,coverage,fuzzing", "--max-examples", "15", "--mode", "all", "--seed", "1",
            "--workers", "2", "--request-timeout", "10", "--max-time", "60",
        ])
        #expect(result.status == 0, "\(result.output)")
        #expect(gateway.sender.callCount == 0, "no generated request can hold a valid grant and signature")
    }
}
