import Foundation
public import TransferProtocol

/// A submit whose checks that may wait are done: the host rules (which may resolve a name) and
/// the filesystem's (run off the actor). `TransferManager.accept` checks the rest and writes it.
public struct CheckedSubmit: Sendable {
    let params: Submit.Params
    /// What passed (the URL, and whether the destination was checked), or why it was refused.
    let outcome: Result<Passed, CoreError>

    struct Passed: Sendable {
        var url: URL
        var destinationChecked: Bool
    }
}

extension TransferManager {
    /// The checks of `batch` that may wait, for `accept`: the host checks (which may resolve
    /// names), then the filesystem, off the actor (`DestinationChecks`). A submit naming a job
    /// that exists is answered by that job, so its destination is not checked.
    public func check(_ batch: [Submit.Params], owner: UInt32, group: UInt32? = nil) async -> [CheckedSubmit] {
        var outcomes: [Result<URL, CoreError>] = []
        for params in batch {
            do throws(CoreError) {
                let url = try SubmitValidator.validateURL(params.url)
                try await engine.hosts.admit(url)
                outcomes.append(.success(url))
            } catch {
                outcomes.append(.failure(error))
            }
        }
        let toCheck = batch.indices.filter { index in
            if case .failure = outcomes[index] { return false }
            return (try? SubmitValidator.validateKind(batch[index])) == .download
                && (batch[index].replace == true || batch[index].id.flatMap { ownedKey($0, owner: owner) } == nil)
        }
        let problems = await DestinationChecks.check(
            toCheck.map { batch[$0] }, owner: DownloadOwner(uid: owner, gid: group), roots: configuration.allowedRoots,
            reserve: configuration.diskReserveBytes, inbox: configuration.inbox, inboxBudget: configuration.inboxBytesPerUser)
        var destinationChecked = [Bool](repeating: false, count: batch.count)
        for (index, problem) in zip(toCheck, problems) {
            if let problem { outcomes[index] = .failure(problem) } else { destinationChecked[index] = true }
        }
        return batch.indices.map { index in
            CheckedSubmit(
                params: batch[index],
                outcome: outcomes[index].map { CheckedSubmit.Passed(url: $0, destinationChecked: destinationChecked[index]) })
        }
    }
}
