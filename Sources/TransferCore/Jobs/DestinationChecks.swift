import Dispatch
import TransferProtocol

/// The checks of submits that touch the filesystem: the directories created when asked, the
/// destination under an allowed root and writable by its owner, not there already unless it is
/// to be replaced, and room for the announced size.
///
/// They run on their own queue, off the core's actor, so a slow or hung filesystem holds up only
/// the submits that name it, not every client. The checks of one batch look the user up once and
/// open each directory once, however many of the batch's files go there.
enum DestinationChecks {
    private static let queue = DispatchQueue(label: "transferd.destination-checks", attributes: .concurrent)

    /// What checking each of `batch` found (nil: it passed), in order. The parameters' own checks
    /// (id, headers, digest, session, limits, size) come first, so that a submit refused for its
    /// parameters creates no directory.
    /// A submit without destination is checked against `inbox` (its budget `inboxBudget`).
    static func check(
        _ batch: [Submit.Params], owner: DownloadOwner, roots: AllowedRoots, reserve: Int64, inbox: Inbox? = nil, inboxBudget: Int64 = 0
    ) async -> [CoreError?] {
        await withCheckedContinuation { continuation in
            queue.async {
                let access = owner.accessToCheck()
                var opened: [String: DirectoryHandle] = [:]
                let problems = batch.map { params -> CoreError? in
                    do throws(CoreError) {
                        if params.destination == nil, let inbox {
                            try inbox.admit(params, owner: owner.uid, budget: inboxBudget, reserve: reserve)
                            return nil
                        }
                        try checkParameters(params)
                        guard let destination = params.destination else {
                            throw CoreError(.invalidParameter("destination"), "a download needs destination: the absolute path of the file to create")
                        }
                        if params.createDirectories == true {
                            try DirectoryCreator.createDirectories(of: destination, roots: roots, owner: owner)
                        }
                        try SubmitValidator.validateDestination(
                            destination, overwrite: (params.overwrite ?? false) || params.conditional == true, roots: roots, access: access, opened: &opened)
                        if let size = params.size {
                            try SubmitValidator.validateSpace(for: size, destination: destination, reserve: reserve)
                        }
                        return nil
                    } catch {
                        return error
                    }
                }
                continuation.resume(returning: problems)
            }
        }
    }

    /// The checks of a submit's own parameters, which touch nothing.
    static func checkParameters(_ params: Submit.Params) throws(CoreError) {
        if let id = params.id { try SubmitValidator.validateID(id) }
        try SubmitValidator.validateHeaders(params.headers ?? [:])
        _ = try SubmitValidator.validateSHA256(params.sha256)
        if let session = params.session { try SubmitValidator.validateSession(session) }
        try SubmitValidator.validateRetryLimits(params.retry)
        try SubmitValidator.validateSize(params.size)
        try SubmitValidator.validateTimes(notBefore: params.notBefore, deadline: params.deadline)
    }
}
