import Foundation

/// The process environment as a dictionary, read once at start-up.
public enum ProcessInfoEnvironment {
    public static func current() -> [String: String] { ProcessInfo.processInfo.environment }
}
