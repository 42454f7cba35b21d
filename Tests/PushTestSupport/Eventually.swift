import Foundation

/// Polls `condition` every `interval` seconds for up to `seconds`.
public func eventually(
    within seconds: Double = 2, every interval: Double = 0.1, _ condition: () throws -> Bool
) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: interval)
    }
    return try condition()
}
