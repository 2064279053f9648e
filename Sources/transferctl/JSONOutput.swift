import Foundation
import TransferProtocol

/// Prints values on stdout as one line of JSON, in the wire's conventions.
enum JSONOutput {
    /// Prints `value` encoded by `WireCoding.encoder()`, followed by a newline.
    static func print(_ value: some Encodable) throws {
        let data = try WireCoding.encoder().encode(value)
        Swift.print(String(decoding: data, as: UTF8.self))
    }
}
