import Foundation

/// Polls `condition` every 100 ms for up to `seconds`.
public func eventually(within seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if try condition() { return true }
        Thread.sleep(forTimeInterval: 0.1)
    }
    return try condition()
}
