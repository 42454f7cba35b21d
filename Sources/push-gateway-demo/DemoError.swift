/// Why a demo command stopped; the text names the step and what went wrong, never a key or grant.
struct DemoError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
