/// Measures how deeply a JSON text nests arrays and objects with one pass over its bytes, without
/// parsing it, so that a request nested too deeply is refused before any recursive parser sees it.
///
/// Brackets and braces inside strings do not count; a backslash inside a string escapes the byte
/// after it, so `"\""` and `"\\"` end where JSON says they end. The scan does not validate: on text
/// that is not JSON its answer only has to be cheap, since the parser refuses that text anyway.
/// The quote, backslash, bracket and brace bytes never occur inside a multi-byte UTF-8 sequence,
/// so the scan needs no decoding.
public enum JSONNesting {
    /// The deepest nesting of arrays and objects in `bytes` (0 for a scalar, 1 for `{}` or `[1]`).
    /// The scan stops at the first byte that nests deeper than `limit` and returns `limit + 1`.
    public static func depth(of bytes: some Sequence<UInt8>, stoppingAfter limit: Int = .max) -> Int {
        if let depth = bytes.withContiguousStorageIfAvailable({ scan($0, limit: limit) }) {
            return depth
        }
        return Array(bytes).withUnsafeBufferPointer { scan($0, limit: limit) }
    }

    /// Whether `bytes` nests arrays and objects deeper than `limit`.
    public static func exceeds(_ limit: Int, in bytes: some Sequence<UInt8>) -> Bool {
        depth(of: bytes, stoppingAfter: limit) > limit
    }

    private static func scan(_ bytes: UnsafeBufferPointer<UInt8>, limit: Int) -> Int {
        var depth = 0
        var deepest = 0
        forEachStructuralByte(in: bytes) { _, byte in
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > deepest {
                    deepest = depth
                    if deepest > limit { return false }
                }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                // A closer without an opener is not JSON; the parser says so.
                if depth > 0 { depth -= 1 }
            default:
                break
            }
            return true
        }
        return deepest
    }

    /// Calls `body` with the offset of every byte outside strings other than a string's opening
    /// quote, in order, until it returns false. A backslash inside a string escapes the byte after it.
    @inline(__always)
    static func forEachStructuralByte(in bytes: UnsafeBufferPointer<UInt8>, _ body: (Int, UInt8) -> Bool) {
        var inString = false
        var escaped = false
        for (index, byte) in bytes.enumerated() {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            if byte == UInt8(ascii: "\"") {
                inString = true
                continue
            }
            guard body(index, byte) else { return }
        }
    }
}
