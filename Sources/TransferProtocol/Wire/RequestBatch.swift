public import Foundation

/// JSON-RPC 2.0 batches: a request line that is a JSON array of requests, answered by one array of
/// responses (notifications get none).
///
/// The line is parsed once to tell whether it is JSON at all (a batch that is not is one parse
/// error, answered alone); then its elements are cut out of the bytes as they are, so that each is
/// decoded exactly as a request line of its own would be, ids and all.
public enum RequestBatch {
    /// Whether `line` holds a batch: its first byte other than JSON whitespace is `[`.
    public static func isBatch(_ line: Data) -> Bool {
        line.first { !isWhitespace($0) } == UInt8(ascii: "[")
    }

    /// The elements of the batch in `line`, in order, each as the bytes of one JSON value; nil when
    /// `line` is not a JSON array. Check its nesting first (`JSONNesting`): the parser recurses.
    public static func elements(of line: Data) -> [Data]? {
        guard (try? JSONSerialization.jsonObject(with: line, options: [])) is [Any] else { return nil }
        return line.withUnsafeBytes { raw -> [Data] in split(raw.bindMemory(to: UInt8.self)) }
    }

    /// Cuts a valid JSON array into its elements at the commas of the outer level.
    private static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> [Data] {
        var elements: [Data] = []
        var depth = 0
        var start = 0
        JSONNesting.forEachStructuralByte(in: bytes) { index, byte in
            switch byte {
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth == 1 { start = index + 1 }
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if depth == 1 { append(bytes, start..<index, to: &elements) }
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 1 {
                    append(bytes, start..<index, to: &elements)
                    start = index + 1
                }
            default:
                break
            }
            return true
        }
        return elements
    }

    /// Appends the element in `range`, trimmed of whitespace; an empty range is the inside of `[]`.
    private static func append(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, to elements: inout [Data]) {
        var lower = range.lowerBound
        var upper = range.upperBound
        while lower < upper, isWhitespace(bytes[lower]) { lower += 1 }
        while upper > lower, isWhitespace(bytes[upper - 1]) { upper -= 1 }
        guard lower < upper else { return }
        elements.append(Data(UnsafeBufferPointer(rebasing: bytes[lower..<upper])))
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
