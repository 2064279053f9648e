import Foundation
import TransferCore

// libFuzzer target for journal recovery: the input is a journal file's bytes, replayed in memory
// exactly as the daemon replays its journal on start. A crash, a trap or a failed `check` is a
// finding; `.corrupt` refusals are expected.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJournalRecovery(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    replayAndCheck(bytes)
    // The same bytes with every line's checksum made right: random bytes almost never carry a
    // valid CRC-32C, and without this the fuzzer would rarely get past the checksum to the
    // sequence numbers, keys, lengths and operations behind it.
    let repaired = withChecksumsRepaired(bytes)
    if repaired != bytes { replayAndCheck(repaired) }
    return 0
}

private func replayAndCheck(_ bytes: [UInt8]) {
    let replayed: JournalReplay
    do {
        replayed = try Journal.replay(bytes)
    } catch {
        check(error.code == .corrupt, "replay failed with \(error.code): \(error.message)")
        return
    }
    check(replayed.validBytes <= bytes.count, "more valid bytes than bytes")
    // What start-up keeps after cutting a torn tail replays to the same state, with nothing torn.
    do {
        let kept = try Journal.replay(Array(bytes[..<replayed.validBytes]))
        check(kept == replayed, "the journal without its torn tail replays differently")
    } catch {
        check(false, "the journal without its torn tail does not replay: \(error)")
    }
    // Appending after the kept records, as the daemon does next, and compacting them, as it does
    // later, both start from the next sequence number; what compaction writes replays to the
    // same live keys.
    let (nextSequence, overflow) = replayed.lastSequence.addingReportingOverflow(1)
    check(!overflow, "the last sequence number \(replayed.lastSequence) leaves no next one")
    let snapshot = Journal.snapshot(of: replayed.live, firstSequence: nextSequence)
    do {
        let compacted = try Journal.replay(snapshot)
        check(compacted.live == replayed.live, "a compacted journal holds other keys")
        check(compacted.validBytes == snapshot.count, "a compacted journal has a torn tail")
    } catch {
        check(false, "a compacted journal does not replay: \(error)")
    }
}

/// `bytes` with the fifth space-separated field of every line replaced by the CRC-32C that the
/// record format asks for there: of the four fields before it (with their spaces) and the value.
private func withChecksumsRepaired(_ bytes: [UInt8]) -> [UInt8] {
    var output: [UInt8] = []
    output.reserveCapacity(bytes.count + 16)
    var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)[...]
    let last = lines.popLast()
    func repair(_ line: ArraySlice<UInt8>) -> [UInt8] {
        var spaces: [Int] = []
        for index in line.indices where line[index] == UInt8(ascii: " ") {
            spaces.append(index)
            if spaces.count == 5 { break }
        }
        guard spaces.count == 5 else { return Array(line) }
        let header = line[line.startIndex...spaces[3]]
        let value = line[(spaces[4] + 1)...]
        let crc = crc32c(value, crc32c(header, 0))
        let digits = Array("0123456789abcdef".utf8)
        let hex = (0..<8).reversed().map { digits[Int((crc >> (UInt32($0) * 4)) & 0xF)] }
        return Array(header) + hex + [UInt8(ascii: " ")] + Array(value)
    }
    for line in lines {
        output += repair(line)
        output.append(UInt8(ascii: "\n"))
    }
    if let last { output += repair(last) }
    return output
}

/// CRC-32C (Castagnoli), bit by bit: slow, but independent of the implementation under test.
private func crc32c(_ bytes: ArraySlice<UInt8>, _ previous: UInt32) -> UInt32 {
    var crc = ~previous
    for byte in bytes {
        crc ^= UInt32(byte)
        for _ in 0..<8 {
            crc = (crc >> 1) ^ (crc & 1 == 1 ? 0x82F6_3B78 : 0)
        }
    }
    return ~crc
}

/// Fails the run (libFuzzer records the input) when an invariant does not hold.
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { preconditionFailure(message()) }
}

#if !FUZZING
/// Without the fuzzer (a plain `swift build`): runs the inputs named as arguments, for example
/// a crash file, through the same checks.
@main
enum ReplayJournalInputs {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                exit(2)
            }
            _ = [UInt8](data).withUnsafeBytes { fuzzJournalRecovery($0.baseAddress, $0.count) }
            print("ok \(path)")
        }
    }
}
#endif
