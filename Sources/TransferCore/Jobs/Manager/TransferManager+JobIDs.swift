import TransferProtocol

/// Job ids belong to their owner: two users may both submit `--id nightly`.
///
/// A job's key (`JobRecord.id`: the table's and the journal's key, the engine's name for the job,
/// part of its partial file's name) is the id itself while no other job holds that key, which keeps
/// older journals and every single-user daemon as they were; a user whose id another job holds
/// already gets a key that qualifies it with their uid, `1001:nightly`. Clients always see the id
/// as chosen (`wireID`). A submit that finds the owner's job under either key (a resubmission, a
/// replacement) keeps that key, so one owner's id names one key. Ids hold no `:`
/// (`Limits.isValidName`), so the two forms cannot be confused.
///
/// A request names a job by its id, looked up among the caller's own jobs, or as `UID:ID`: root's
/// way to name another user's job (a user may name their own that way too). Root's plain id
/// names root's own job, else the one job of any user with that id; when several users have it,
/// the error lists them. Another user's job never shows: it reads as no such job.
extension TransferManager {
    /// The key of the job `name` names for `caller`, or nil when it names none `caller` may see.
    func jobKey(_ name: String, caller: UInt32) -> String? {
        if let colon = name.firstIndex(of: ":") {
            guard let owner = UInt32(name[..<colon]), caller == 0 || owner == caller else { return nil }
            return ownedKey(String(name[name.index(after: colon)...]), owner: owner)
        }
        if let key = ownedKey(name, owner: caller) { return key }
        guard caller == 0 else { return nil }
        let keys = keysOfAnyOwner(named: name)
        return keys.count == 1 ? keys.first : nil
    }

    /// The key of `owner`'s job whose id is `id`, if there is one.
    func ownedKey(_ id: String, owner: UInt32) -> String? {
        if jobs.summary(id)?.owner == owner { return id }
        let key = JobRecord.key(owner: owner, chosenID: id)
        return jobs.contains(key) ? key : nil
    }

    /// The key a submit of `owner` gives its job: the key of the owner's job its id names already
    /// (a resubmission, a replacement), else the id itself when no job holds it, else the id
    /// qualified with the owner; a made-up id when the client chose none.
    func keyForSubmit(_ id: String?, owner: UInt32) -> String {
        guard let id else { return newJobID() }
        if let key = ownedKey(id, owner: owner) { return key }
        return jobs.contains(id) ? JobRecord.key(owner: owner, chosenID: id) : id
    }

    /// The keys of every job, of any owner, whose id is `name`.
    func keysOfAnyOwner(named name: String) -> [String] {
        (jobs.contains(name) ? [name] : []) + jobs.qualifiedKeys(of: name).sorted()
    }

    /// Why root's `name` names no single job, when several users have a job with that id.
    func ambiguity(_ name: String, caller: UInt32) -> CoreError? {
        guard caller == 0, !name.contains(":") else { return nil }
        let named = keysOfAnyOwner(named: name).compactMap { key in jobs.summary(key).map { "\($0.owner):\(name)" } }
        guard named.count > 1 else { return nil }
        return CoreError(
            .noSuchJob,
            "job id \(name) names jobs of several users (\(named.prefix(5).joined(separator: ", "))\(named.count > 5 ? ", …" : "")): "
                + "name one as UID:ID, e.g. transferctl status \(named[0])")
    }
}

extension JobRecord {
    /// The id clients see: the one the client chose, without the owner's uid that `id` (the key)
    /// may add to it.
    public var wireID: String { Self.wireID(ofKey: id) }

    static func wireID(ofKey key: String) -> String {
        guard let colon = key.firstIndex(of: ":") else { return key }
        return String(key[key.index(after: colon)...])
    }

    /// The key of a job `owner` submitted with the id `chosenID`, when another job holds the id itself.
    static func key(owner: UInt32, chosenID: String) -> String { "\(owner):\(chosenID)" }
}
