import CLinuxShims

/// CRC-32C (Castagnoli), the checksum of every journal record; computed by the processor where it
/// can (Sources/CLinuxShims/crc32c.c), so replaying a large journal is bound by reading it.
enum CRC32C {
    /// Continues a checksum over `bytes`; start with `0`.
    static func update(_ crc: UInt32, _ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress else { return crc }
        return clinuxshims_crc32c(crc, base, bytes.count)
    }

    static func update(_ crc: UInt32, _ bytes: some Collection<UInt8>) -> UInt32 {
        if let result = bytes.withContiguousStorageIfAvailable({ update(crc, UnsafeRawBufferPointer($0)) }) { return result }
        return Array(bytes).withUnsafeBytes { update(crc, $0) }
    }

    static func checksum(_ bytes: some Collection<UInt8>) -> UInt32 { update(0, bytes) }
}
