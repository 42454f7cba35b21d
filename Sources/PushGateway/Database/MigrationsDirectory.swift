import Foundation

/// Where `migrate` looks for its SQL files (docs/protocol.md §12): `--migrations-dir`, else
/// `PUSH_GATEWAY_MIGRATIONS_DIR`, else `./Migrations` (a source checkout), else
/// `<install prefix>/share/push-gateway/migrations` where the prefix is the executable's
/// directory's parent (`/usr/local/bin/push-gateway` → `/usr/local/share/push-gateway/migrations`).
package enum MigrationsDirectory {
    static let environmentVariable = "PUSH_GATEWAY_MIGRATIONS_DIR"

    static func resolve(
        flag: String?, environment: [String: String], currentDirectory: String, executablePath: String,
        isDirectory: (String) -> Bool
    ) -> String {
        if let flag { return flag }
        if let configured = environment[environmentVariable], !configured.isEmpty { return configured }
        let checkout = (currentDirectory as NSString).appendingPathComponent("Migrations")
        if isDirectory(checkout) { return checkout }
        let binDirectory = (executablePath as NSString).deletingLastPathComponent
        let prefix = (binDirectory as NSString).deletingLastPathComponent
        return (prefix as NSString).appendingPathComponent("share/push-gateway/migrations")
    }

    /// The same with the process's own working directory and executable.
    package static func resolve(flag: String?, environment: [String: String]) -> String {
        let executable = Bundle.main.executableURL?.resolvingSymlinksInPath().path ?? CommandLine.arguments[0]
        return resolve(
            flag: flag, environment: environment, currentDirectory: FileManager.default.currentDirectoryPath,
            executablePath: executable,
            isDirectory: { path in
                var directory: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
            })
    }
}
