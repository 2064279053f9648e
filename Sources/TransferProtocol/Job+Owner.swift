extension Job {
    /// The job named unambiguously, `UID:ID`: two users may both have a job `nightly`. Root names
    /// another user's job this way; the daemon accepts it wherever a job id goes.
    public var ownedID: String { "\(owner):\(id)" }

    /// Whether `name`, a job id as a client gave it, names this job: its id, or `UID:ID`.
    public func isNamed(_ name: String) -> Bool { id == name || ownedID == name }
}
