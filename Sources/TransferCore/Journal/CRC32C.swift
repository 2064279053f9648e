/// CRC-32C (Castagnoli), the checksum of every journal record.
enum CRC32C {
    private static let table: [UInt32] = (0..<256).map { index in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = (crc & 1) != 0 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1
        }
        return crc
    }

    /// Continues a checksum over `bytes`; start with `0`.
    static func update(_ crc: UInt32, _ bytes: some Sequence<UInt8>) -> UInt32 {
        var value = ~crc
        for byte in bytes {
            value = table[Int((value ^ UInt32(byte)) & 0xFF)] ^ (value >> 8)
        }
        return ~value
    }

    static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 { update(0, bytes) }
}
