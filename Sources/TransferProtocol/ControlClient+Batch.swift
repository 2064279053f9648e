import Foundation

extension ControlClient {
    /// Calls `method` once for each of `params`, all in one JSON-RPC batch (one request line), and
    /// returns each call's result or error in the order of `params`. The daemon carries out a
    /// batch's submits in one durable step. At most `Limits.maxBatchCalls` calls, and the line
    /// must fit the daemon's request line limit: split longer lists.
    public func callBatch<M: RPCMethod>(_ method: M.Type, _ params: [M.Params]) throws(ControlClientError) -> [Result<M.Result, RPCError>] {
        guard !params.isEmpty else { return [] }
        let encoder = WireCoding.encoder()
        let line: Data
        do {
            line = try encoder.encode(params.enumerated().map { RPCRequest(id: .number(Int64($0.offset + 1)), method: M.name, params: $0.element) })
        } catch {
            throw .protocolViolation("cannot encode the request: \(error)")
        }
        try sendLine(Array(line))
        let decoder = WireCoding.decoder()
        while true {
            let reply = try readLine()
            guard RequestBatch.isBatch(Data(reply)) else {
                // One error answers a batch refused as a whole; a notification is skipped.
                guard let response = try? decoder.decode(RPCResponse<M.Result>.self, from: Data(reply)) else {
                    throw .protocolViolation(String(decoding: reply.prefix(200), as: UTF8.self))
                }
                if let error = response.error { throw .rpc(error) }
                continue
            }
            let responses: [RPCResponse<M.Result>]
            do {
                responses = try decoder.decode([RPCResponse<M.Result>].self, from: Data(reply))
            } catch {
                throw .protocolViolation("the answer to a batch cannot be read (\(error)): \(String(decoding: reply.prefix(200), as: UTF8.self))")
            }
            var results: [Int: Result<M.Result, RPCError>] = [:]
            for response in responses {
                guard case .number(let number) = response.id, (1...Int64(params.count)).contains(number) else { continue }
                if let error = response.error {
                    results[Int(number) - 1] = .failure(error)
                } else if let result = response.result {
                    results[Int(number) - 1] = .success(result)
                }
            }
            return try (0..<params.count).map { (index) throws(ControlClientError) in
                guard let result = results[index] else {
                    throw .protocolViolation("the answer to a batch of \(params.count) calls has none for call \(index + 1)")
                }
                return result
            }
        }
    }
}
