/// Lowercase hexadecimal digits, without a table: the journal's checksum field, file digests and
/// JSON's `\u00XX` escapes write them one at a time.
package enum HexDigits {
    /// The digit of `nibble` (0 to 15): `0`–`9`, `a`–`f`.
    @inline(__always)
    package static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10
    }

    /// Appends the two digits of `byte`.
    @inline(__always)
    package static func append(_ byte: UInt8, to output: inout [UInt8]) {
        output.append(digit(byte >> 4))
        output.append(digit(byte & 0xF))
    }
}
