import Foundation
import Testing
import TransferProtocol

/// Decodes a method's params from a request line as the daemon does, for params tests.
struct ParamsDecoding {
    let decoder: RequestDecoder

    init(methods: [String]) {
        decoder = RequestDecoder(methods: methods)
    }

    func params<M: RPCMethod>(_ method: M.Type, _ params: String) throws -> M.Params {
        let line = Data((#"{"jsonrpc":"2.0","id":1,"method":"\#(M.name)","params":"# + params + "}").utf8)
        return try decoder.decode(line).params(for: M.self)
    }

    /// The invalid-params message for `params`, or nil when they decode.
    func problem<M: RPCMethod>(_ method: M.Type, _ params: String) -> String? {
        do {
            _ = try self.params(method, params)
            return nil
        } catch let error as RPCError {
            #expect(error.code == .invalidParams)
            return error.message
        } catch {
            return "\(error)"
        }
    }
}
