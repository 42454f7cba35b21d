import Glibc

/// Readiness of a descriptor this module does not own (e.g. libpq's socket), asked without waiting.
public enum DescriptorReadiness {
    /// Whether `descriptor` has input, a hang-up or an error pending right now; true for an invalid one.
    public static func hasPendingInput(_ descriptor: Int32) -> Bool {
        guard descriptor >= 0 else { return true }
        var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&entry, 1, 0) != 0
    }
}
