import Foundation
import PushTestSupport
import Testing

/// The chart's migration Job as the kubelet would run it: its secret volume's files with the mode
/// and group the pod spec gives them, its container's command as its user, from an installed
/// layout outside the checkout, against the test command's PostgreSQL.
@Suite("The chart's migration Job runs as its pod spec says", .tags(.postgres, .process, .slow), .testBodyThreads)
struct HelmMigrationJobTests {
    /// What the kubelet makes of the rendered Job: the process's user, group and supplementary
    /// groups, and the secret volume's file group and mode.
    struct KubeletView {
        let user: Int
        let group: Int
        let supplementaryGroups: [Int]
        let secretFileGroup: Int
        let secretFileMode: Int

        /// A secret volume's files belong to root with `defaultMode`; with `fsGroup` their group is
        /// fsGroup, its read bit is set, and fsGroup joins the container's supplementary groups.
        init(pod: [String: Any]) throws {
            let podContext = pod["securityContext"] as? [String: Any] ?? [:]
            let container = try #require((pod["containers"] as? [[String: Any]])?.first)
            let containerContext = container["securityContext"] as? [String: Any] ?? [:]
            user = try #require(containerContext["runAsUser"] as? Int ?? podContext["runAsUser"] as? Int)
            group = try #require(containerContext["runAsGroup"] as? Int ?? podContext["runAsGroup"] as? Int)
            let volume = try #require((pod["volumes"] as? [[String: Any]])?.first?["secret"] as? [String: Any])
            let defaultMode = volume["defaultMode"] as? Int ?? 0o644
            if let fsGroup = podContext["fsGroup"] as? Int {
                supplementaryGroups = [fsGroup]
                secretFileGroup = fsGroup
                secretFileMode = defaultMode | 0o040
            } else {
                supplementaryGroups = []
                secretFileGroup = 0
                secretFileMode = defaultMode
            }
        }
    }

    /// Runs the Job's container command (the runtime role swapped for `role`) as the kubelet would,
    /// with the push-gateway binary and Migrations/ installed under a prefix in a scratch folder.
    static func runJob(_ pod: [String: Any], database: TemporaryDatabase, role: String) throws -> ToolProcess.Outcome {
        let view = try KubeletView(pod: pod)
        let container = try #require((pod["containers"] as? [[String: Any]])?.first)
        let mount = try #require((container["volumeMounts"] as? [[String: Any]])?.first?["mountPath"] as? String)
        var arguments = try #require(container["args"] as? [String])
        let roleIndex = try #require(arguments.firstIndex(of: "--runtime-role")) + 1
        arguments[roleIndex] = role

        let files = FileManager.default
        let scratch = files.temporaryDirectory.appendingPathComponent("migration-job-\(UUID().uuidString)")
        defer { try? files.removeItem(at: scratch) }
        let prefix = scratch.appendingPathComponent("prefix")
        let binary = prefix.appendingPathComponent("bin/push-gateway")
        let migrations = prefix.appendingPathComponent("share/push-gateway/migrations")
        try files.createDirectory(at: binary.deletingLastPathComponent(), withIntermediateDirectories: true)
        try files.createDirectory(at: migrations.deletingLastPathComponent(), withIntermediateDirectories: true)
        try files.copyItem(at: try ReaperServeTests.executable(), to: binary)
        try files.copyItem(at: HelmChartTests.repository.appendingPathComponent("Migrations"), to: migrations)

        let secrets = scratch.appendingPathComponent("secret-volume")
        try files.createDirectory(at: secrets, withIntermediateDirectories: true)
        let secret = secrets.appendingPathComponent("database-url")
        try Data(database.url.utf8).write(to: secret)
        try files.setAttributes(
            [.ownerAccountID: 0, .groupOwnerAccountID: view.secretFileGroup, .posixPermissions: view.secretFileMode],
            ofItemAtPath: secret.path)
        // Every folder on the way is open to the container's user, as a container's root is.
        for folder in [
            scratch, prefix, binary.deletingLastPathComponent(), migrations.deletingLastPathComponent(), secrets,
        ] {
            try files.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        }

        var environment = ["PATH": "/usr/bin:/bin"]
        for variable in container["env"] as? [[String: Any]] ?? [] {
            let name = try #require(variable["name"] as? String)
            let value = try #require(variable["value"] as? String)
            environment[name] = value.replacingOccurrences(of: mount, with: secrets.path)
        }
        let groups =
            view.supplementaryGroups.isEmpty
            ? ["--clear-groups"] : ["--groups", view.supplementaryGroups.map(String.init).joined(separator: ",")]
        return try ToolProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["-C", scratch.path, "/usr/bin/setpriv", "--reuid", "\(view.user)", "--regid", "\(view.group)"] + groups
                + [binary.path] + arguments,
            environment: environment)
    }

    @Test("the rendered Job's command, as uid 10001 with its secret volume's modes, reads its secret and migrates")
    func jobMigratesAsItsUser() throws {
        let (_, summary) = try HelmChartTests.validateChart()
        let pod = try #require(summary["migrationJob"] as? [String: Any])
        let view = try KubeletView(pod: pod)
        #expect(view.user == 10001 && view.group == 10001)
        #expect(view.secretFileMode == 0o440 && view.secretFileGroup == 10001)
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let outcome = try Self.runJob(pod, database: database, role: role.name)
            #expect(outcome.status == 0, "\(outcome.errors)")
            #expect(outcome.outputText.contains("applied 0001_initial.sql"), "\(outcome.outputText)")
        }
    }

    @Test("without fsGroup (the Job before this chart version) the same command cannot read its secret")
    func withoutFSGroupTheSecretIsUnreadable() throws {
        let (_, summary) = try HelmChartTests.validateChart()
        var pod = try #require(summary["migrationJob"] as? [String: Any])
        var context = try #require(pod["securityContext"] as? [String: Any])
        context["fsGroup"] = nil
        pod["securityContext"] = context
        try TemporaryDatabase.with { database in
            let role = try database.createRole()
            let outcome = try Self.runJob(pod, database: database, role: role.name)
            #expect(outcome.status == 1)
            #expect(outcome.errors.contains("DATABASE_URL_FILE: the file cannot be read"), "\(outcome.errors)")
        }
    }
}
