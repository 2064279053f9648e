import Foundation
public import TransferProtocol

extension JobRecord {
    /// Room between the positions of jobs in submission order, so that a job moved between two
    /// of them gets a position of its own without renumbering the others.
    static let positionGap: Int64 = 1 << 20

    /// The job's class (`normal` when the record has none).
    public var priorityClass: JobPriority { priority ?? .normal }

    /// The job's position within its class: where it was moved to, else its submission order.
    var queuePosition: Int64 { Self.queuePosition(position, order: order) }

    /// A position within a class: where `move` put a job (`position`), else its submission
    /// `order`, spaced `positionGap` apart.
    static func queuePosition(_ position: Int64?, order: UInt64) -> Int64 {
        if let position { return position }
        let (spaced, overflow) = Int64(clamping: order).multipliedReportingOverflow(by: positionGap)
        return overflow ? Int64.max : spaced
    }

    /// The host its transfers connect to, lowercased; the port does not count.
    var hostKey: String {
        URL(string: url)?.host(percentEncoded: false)?.lowercased() ?? ""
    }
}

extension Job {
    /// The job with its class, which the wire always gives.
    func withPriority(_ priority: JobPriority) -> Job {
        var job = self
        job.priority = priority
        return job
    }
}

extension SubmitValidator {
    /// A submitted or requested class; nil when none was given.
    static func validatePriority(_ text: String?) throws(CoreError) -> JobPriority? {
        guard let text else { return nil }
        guard let priority = JobPriority(rawValue: text) else {
            throw CoreError(
                .invalidParameter("priority"),
                "priority '\(text.prefix(40))' is not a class: give \(JobPriority.choices) (transferctl --priority CLASS)")
        }
        return priority
    }
}
