import Foundation
import TransferProtocol

/// Splits a long list of submits into JSON-RPC batches the daemon takes: at most
/// `Limits.maxBatchCalls` calls, and a line within the default request line limit. Each batch is
/// one durable step; a list that fits in one (almost any) is accepted all at once.
enum SubmitBatches {
    /// Room left in a line for the batch's brackets and each call's envelope.
    static let envelopeBytes = 64

    /// The indices of `params`, in order, cut into batches.
    static func split(_ params: [Submit.Params], lineLimit: Int = Limits.maxRequestLineBytes) throws -> [[Int]] {
        let encoder = WireCoding.encoder()
        var batches: [[Int]] = []
        var current: [Int] = []
        var bytes = 2
        for (index, submit) in params.enumerated() {
            let size = try encoder.encode(submit).count + envelopeBytes
            if !current.isEmpty, current.count == Limits.maxBatchCalls || bytes + size > lineLimit {
                batches.append(current)
                current = []
                bytes = 2
            }
            current.append(index)
            bytes += size
        }
        if !current.isEmpty { batches.append(current) }
        return batches
    }
}
