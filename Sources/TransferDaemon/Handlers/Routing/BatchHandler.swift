import Foundation
import NIOCore
import TransferCore
import TransferProtocol

extension RequestRouter {
    /// One call of a batch, read as far as its method.
    private enum BatchCall {
        /// Refused before any method ran; answered with this error unless it is a notification's (nil id).
        case refused(RPCError, id: RPCID?)
        case submit(Submit.Params, id: RPCID?)
        case other(DecodedRequest)
    }

    /// Answers a JSON-RPC batch: one array of responses in the order of the calls, without entries
    /// for notifications, or nil when every call was a notification. A batch that is not JSON, is
    /// empty, or holds more than `Limits.maxBatchCalls` calls is answered by one error alone.
    ///
    /// Calls run in order. Submits next to each other run as one: their jobs are written to the
    /// journal together and synced once, so a batch of submits is one durable step.
    func respond(toBatch data: Data, from peer: Peer, subscriptions: ConnectionSubscriptions) async -> ByteBuffer? {
        let maxDepth = configuration.current.maxJsonDepth
        // The array is one more level around each request.
        if JSONNesting.exceeds(maxDepth + 1, in: data) {
            return encodeFailure(
                id: .null,
                RPCError(
                    .requestTooDeep,
                    "the batch nests arrays and objects more than \(maxDepth) levels deep inside its array (max_json_depth) and was ignored"))
        }
        guard let elements = RequestBatch.elements(of: data) else {
            return encodeFailure(id: .null, RPCError(.parseError, "the batch is not valid JSON: send one JSON array of JSON-RPC 2.0 requests per line"))
        }
        guard !elements.isEmpty else {
            return encodeFailure(id: .null, RPCError(.invalidRequest, "the batch is empty: send at least one request in the array"))
        }
        guard elements.count <= Limits.maxBatchCalls else {
            return encodeFailure(
                id: .null,
                RPCError(
                    .invalidRequest,
                    "the batch holds \(elements.count) calls, more than the \(Limits.maxBatchCalls) one batch may hold: split it into several batches"))
        }
        let decoder = RequestDecoder(methods: Self.methods, maxDepth: maxDepth)
        let calls = elements.map { element -> BatchCall in
            let request: DecodedRequest
            do throws(RequestDecodingError) {
                request = try decoder.decode(element)
            } catch {
                return .refused(error.error, id: error.id)
            }
            guard request.method == Submit.name else { return .other(request) }
            do throws(RPCError) {
                return .submit(try request.params(for: Submit.self), id: request.id)
            } catch {
                return .refused(error, id: request.id)
            }
        }
        var answers: [ByteBuffer] = []
        var index = 0
        while index < calls.count {
            switch calls[index] {
            case .refused(let error, let id):
                if let id { answers.append(encodeFailure(id: id, error)) }
                index += 1
            case .other(let request):
                let answer = await dispatch(request, peer: peer, subscriptions: subscriptions)
                if request.id != nil { answers.append(answer) }
                index += 1
            case .submit:
                var run: [(params: Submit.Params, id: RPCID?)] = []
                while index < calls.count, case .submit(let params, let id) = calls[index] {
                    run.append((params, id))
                    index += 1
                }
                let results = await submit(run.map(\.params), peer: peer)
                for (call, result) in zip(run, results) {
                    guard let id = call.id else { continue }
                    switch result {
                    case .success(let answer): answers.append(encodeSuccess(id: id, answer))
                    case .failure(let error): answers.append(encodeFailure(id: id, error))
                    }
                }
            }
        }
        guard !answers.isEmpty else { return nil }
        var line = ByteBuffer()
        line.reserveCapacity(answers.reduce(2) { $0 + $1.readableBytes })
        line.writeString("[")
        for (position, var answer) in answers.enumerated() {
            if position > 0 { line.writeString(",") }
            // Each answer is a line of its own: without its newline it is one element.
            answer.moveWriterIndex(to: answer.writerIndex - 1)
            line.writeBuffer(&answer)
        }
        line.writeString("]\n")
        return line
    }
}
