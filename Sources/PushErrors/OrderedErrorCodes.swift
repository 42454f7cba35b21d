/// An error type whose codes have an order that matters to callers, e.g. "the first failing step
/// wins" (docs/decisions/0540). It lists its ordered codes once; their codes then compare by their
/// position in that list, and a code outside the list sorts after every listed one.
public protocol OrderedErrorCodes {
    static var allCodes: [ErrorCode<Self>] { get }
}

extension ErrorCode: Comparable where Owner: OrderedErrorCodes {
    public static func < (lhs: Self, rhs: Self) -> Bool {
        lhs.position < rhs.position
    }

    private var position: Int { Owner.allCodes.firstIndex(of: self) ?? Owner.allCodes.count }
}
