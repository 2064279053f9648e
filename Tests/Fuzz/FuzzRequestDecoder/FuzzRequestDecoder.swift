import Foundation
import NIOCore
import NIOEmbedded
import TransferFraming
import TransferProtocol

// libFuzzer target for what the control socket does to untrusted bytes before any handler runs:
// the line framing (`LineFrameDecoder`, fed in input-dependent chunks) and, for every line, the
// request decoder (depth scan, JSON-RPC header, params of the named method). A crash, a trap or a
// failed `check` is a finding; refusals are expected.

/// Short, so that the fuzzer reaches the over-long-line path with small inputs.
private let maxLineBytes = 1024

/// The methods whose params are decoded, as the daemon's.
private let methodNames = [Submit.name, Status.name, Cancel.name, Subscribe.name, Unsubscribe.name, Ack.name, Version.name, MetricsMethod.name]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequestDecoder(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let input = start.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let frames = frame(input)
    check(frames == referenceFrames(input), "the line framing differs from the reference for \(input)")
    let decoder = RequestDecoder(methods: methodNames)
    for case .line(let line) in frames {
        decodeLine(line, with: decoder)
    }
    // The whole input as one line, as the framing would pass it when it holds no newline.
    decodeLine(input, with: decoder)
    return 0
}

/// Fails the run (libFuzzer records the input) when an invariant does not hold.
private func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { preconditionFailure(message()) }
}

// MARK: - Framing

/// A frame as the tests compare it.
private enum Frame: Equatable {
    case line([UInt8])
    case tooLong
}

/// Feeds `input` to the real decoder through an embedded channel, in chunks whose sizes follow
/// from the input, then half-closes the input as a client that shuts down its write side does.
private func frame(_ input: [UInt8]) -> [Frame] {
    let channel = EmbeddedChannel(handler: ByteToMessageHandler(LineFrameDecoder(maxLength: maxLineBytes)))
    var frames: [Frame] = []
    func drain() {
        while let frame = try? channel.readInbound(as: LineFrame.self) {
            switch frame {
            case .line(let buffer): frames.append(.line(Array(buffer.readableBytesView)))
            case .tooLong: frames.append(.tooLong)
            }
        }
    }
    var chunkSizes = ChunkSizes(seed: UInt64(input.count) &* 0x9E37_79B9 ^ UInt64(input.first ?? 0))
    var offset = 0
    do {
        while offset < input.count {
            let end = min(input.count, offset + chunkSizes.next())
            try channel.writeInbound(ByteBuffer(bytes: input[offset..<end]))
            drain()
            offset = end
        }
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        drain()
        _ = try channel.finish()
    } catch {
        check(false, "the line framing failed: \(error)")
    }
    drain()
    return frames
}

/// What the framing must produce, computed the obvious way: lines split at `\n`, a trailing `\r`
/// removed, lines over the limit reported once as too long, and a last line without its newline
/// kept as it is.
private func referenceFrames(_ input: [UInt8]) -> [Frame] {
    var frames: [Frame] = []
    var lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
    let last = lines.removeLast()
    for line in lines {
        if line.count > maxLineBytes {
            frames.append(.tooLong)
        } else {
            frames.append(.line(Array(line.last == UInt8(ascii: "\r") ? line.dropLast() : line)))
        }
    }
    if last.count > maxLineBytes {
        frames.append(.tooLong)
    } else if !last.isEmpty {
        frames.append(.line(Array(last)))
    }
    return frames
}

/// Chunk sizes from 1 to 64 bytes, a SplitMix64 sequence so each input is fed the same way every run.
private struct ChunkSizes {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % 64) + 1
    }
}

// MARK: - Decoding

private func decodeLine(_ bytes: [UInt8], with decoder: RequestDecoder) {
    let line = Data(bytes)
    if RequestBatch.isBatch(line) { splitBatch(line, with: decoder) }
    let depth = JSONNesting.depth(of: line)
    check(JSONNesting.depth(of: line, stoppingAfter: decoder.maxDepth) == min(depth, decoder.maxDepth + 1), "the capped scan disagrees")
    // The scan must never say shallower than the text is. Only parsed when the scan says it is
    // shallow, so that a scan that undercounts shows here rather than in the parser's recursion.
    if depth <= 2 * decoder.maxDepth, let object = try? JSONSerialization.jsonObject(with: line, options: [.fragmentsAllowed]) {
        check(nesting(of: object) <= depth, "the scan says depth \(depth) for a parsed depth of \(nesting(of: object))")
    }
    do {
        let request = try decoder.decode(line)
        check(depth <= decoder.maxDepth, "a request \(depth) levels deep passed")
        // As the router does: the params of the method the request names.
        switch request.method {
        case Submit.name: decodeParams(Submit.self, of: request)
        case Status.name: decodeParams(Status.self, of: request)
        case Cancel.name: decodeParams(Cancel.self, of: request)
        case Subscribe.name: decodeParams(Subscribe.self, of: request)
        case Unsubscribe.name: decodeParams(Unsubscribe.self, of: request)
        case Ack.name: decodeParams(Ack.self, of: request)
        case Version.name: decodeParams(Version.self, of: request)
        case MetricsMethod.name: decodeParams(MetricsMethod.self, of: request)
        default: break
        }
    } catch {
        if depth > decoder.maxDepth {
            check(error.error.code == .requestTooDeep, "a request \(depth) levels deep got \(error.error.code)")
        }
        checkAnswerable(RPCFailure(id: error.id, error: error.error))
    }
}

/// As the router does with a batch (within the depth limit, one level more for the array): its
/// elements, each decoded as a request line. The elements must be exactly the array's, each one
/// JSON value.
private func splitBatch(_ line: Data, with decoder: RequestDecoder) {
    guard !JSONNesting.exceeds(decoder.maxDepth + 1, in: line) else { return }
    guard let elements = RequestBatch.elements(of: line) else { return }
    let parsed = try? JSONSerialization.jsonObject(with: line, options: []) as? [Any]
    check(parsed?.count == elements.count, "a batch of \(parsed?.count ?? -1) values was cut into \(elements.count) elements")
    for element in elements {
        check((try? JSONSerialization.jsonObject(with: element, options: [.fragmentsAllowed])) != nil, "a batch element is not one JSON value")
        do {
            let request = try decoder.decode(element)
            if request.method == Submit.name { decodeParams(Submit.self, of: request) }
        } catch {
            checkAnswerable(RPCFailure(id: error.id, error: error.error))
        }
    }
}

private func decodeParams<M: RPCMethod>(_ method: M.Type, of request: DecodedRequest) where M.Params: Equatable {
    do {
        let params = try request.params(for: method)
        // What was accepted survives a trip through the wire encoding unchanged.
        let encoded: Data
        do {
            encoded = try WireCoding.encoder().encode(RPCRequest(id: .number(1), method: M.name, params: params))
        } catch {
            return check(false, "accepted \(M.name) params do not encode: \(error)")
        }
        check(try RequestDecoder.decodeParams(method, encoded, true) == params, "\(M.name) params change in a round trip")
    } catch {
        check(error.code == .invalidParams, "\(M.name) params failed with \(error.code)")
        checkAnswerable(RPCFailure(id: request.id ?? .null, error: error))
    }
}

/// An error answer must encode as one line, whatever the request held.
private func checkAnswerable(_ failure: RPCFailure) {
    guard let data = try? WireCoding.encoder().encode(failure) else {
        return check(false, "the answer \(failure.error.message) does not encode")
    }
    check(!data.contains(UInt8(ascii: "\n")), "the answer spans lines")
    check(!failure.error.message.isEmpty, "an error without a message")
}

/// How deeply a parsed JSON value nests arrays and objects.
private func nesting(of value: Any) -> Int {
    if let array = value as? [Any] { return 1 + (array.map(nesting).max() ?? 0) }
    if let object = value as? [String: Any] { return 1 + (object.values.map(nesting).max() ?? 0) }
    return 0
}

#if !FUZZING
/// Without the fuzzer (a plain `swift build`): runs the inputs named as arguments, for example
/// a crash file, through the same checks.
@main
enum ReplayRequestInputs {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else {
                print("cannot read \(path)")
                exit(2)
            }
            _ = [UInt8](data).withUnsafeBytes { fuzzRequestDecoder($0.baseAddress, $0.count) }
            print("ok \(path)")
        }
    }
}
#endif
