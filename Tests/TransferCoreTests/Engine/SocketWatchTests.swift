import CLinuxShims
import Testing

/// What FoundationNetworking is told when libcurl changes the directions a socket is watched for
/// (Sources/CLinuxShims/curl_sockets.c): dropping writing removes the socket's sources first,
/// so that a socket waiting for an answer is not watched for writing, which it always allows.
@Suite struct SocketWatchTests {
    static let none: Int32 = 0, input: Int32 = 1, output: Int32 = 2, both: Int32 = 3, remove: Int32 = 4

    static func calls(_ before: Int32, _ what: Int32) -> [Int32] {
        var calls: (Int32, Int32) = (-1, -1)
        let count = withUnsafeMutableBytes(of: &calls) { raw in
            clinuxshims_socket_calls(before, what, raw.baseAddress?.assumingMemoryBound(to: Int32.self))
        }
        return Array([calls.0, calls.1].prefix(Int(count)))
    }

    @Test func aRequestSentThenItsAnswerAwaitedIsWatchedForReadingAlone() {
        #expect(Self.calls(Self.output, Self.input) == [Self.remove, Self.input])
        #expect(Self.calls(Self.both, Self.input) == [Self.remove, Self.input])
    }

    @Test func aSocketNoLongerReadIsLeftAsItIs() {
        // Rarely readable meanwhile, so not worth replacing its sources.
        #expect(Self.calls(Self.input, Self.output) == [Self.output])
        #expect(Self.calls(Self.both, Self.output) == [Self.output])
    }

    @Test func addingADirectionOrKeepingOneGoesOnUnchanged() {
        for (before, what) in [(Self.none, Self.input), (Self.none, Self.output), (Self.input, Self.both), (Self.output, Self.both),
                               (Self.input, Self.input), (Self.output, Self.output), (Self.both, Self.both)] {
            #expect(Self.calls(before, what) == [what], "\(before) -> \(what)")
        }
    }

    @Test func removingAndTheEmptyRegistrationGoOnUnchanged() {
        for before in [Self.none, Self.input, Self.output, Self.both] {
            #expect(Self.calls(before, Self.remove) == [Self.remove])
            #expect(Self.calls(before, Self.none) == [Self.none])
        }
    }
}
