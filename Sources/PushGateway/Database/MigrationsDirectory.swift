import Foundation

/// Where `migrate` looks for its SQL files (docs/protocol.md §12, docs/decisions/0362):
/// `--migrations-dir`, else `PUSH_GATEWAY_MIGRATIONS_DIR`, else the installed layout
/// `<prefix>/share/push-gateway/migrations` where the prefix is the resolved executable's
/// directory's parent (`/usr/local/bin/push-gateway` → `/usr/local/share/push-gateway/migrations`),
/// else, for an executable SwiftPM built (`<checkout>/.build/…/push-gateway`), that checkout's
/// `Migrations`. The working directory plays no part: the SQL always matches the binary.
package enum MigrationsDirectory {
    static let environmentVariable = "PUSH_GATEWAY_MIGRATIONS_DIR"

    /// The directory to read; when neither the installed layout nor a build tree has one, the
    /// installed layout's path, which `migrate` then reports as unreadable.
    static func resolve(
        flag: String?, environment: [String: String], executablePath: String, isDirectory: (String) -> Bool
    ) -> String {
        if let flag { return flag }
        if let configured = environment[environmentVariable], !configured.isEmpty { return configured }
        let binDirectory = (executablePath as NSString).deletingLastPathComponent
        let prefix = (binDirectory as NSString).deletingLastPathComponent
        let installed = (prefix as NSString).appendingPathComponent("share/push-gateway/migrations")
        if isDirectory(installed) { return installed }
        let components = (executablePath as NSString).pathComponents
        if let buildFolder = components.lastIndex(of: ".build") {
            let checkout = NSString.path(withComponents: Array(components[..<buildFolder]))
            let migrations = (checkout as NSString).appendingPathComponent("Migrations")
            if isDirectory(migrations) { return migrations }
        }
        return installed
    }

    /// The same with the process's own executable.
    package static func resolve(flag: String?, environment: [String: String]) -> String {
        let executable = Bundle.main.executableURL?.resolvingSymlinksInPath().path ?? CommandLine.arguments[0]
        return resolve(
            flag: flag, environment: environment, executablePath: executable,
            isDirectory: { path in
                var directory: ObjCBool = false
                return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
            })
    }
}
