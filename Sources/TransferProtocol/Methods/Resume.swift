/// `resume`: queues paused jobs again in their submission order; a download continues from its
/// last checkpoint. Root's `all` also lifts the daemon-wide hold.
public enum Resume: RPCMethod {
    public static let name = "resume"
    public typealias Params = JobSelection
    public typealias Result = JobSelectionResult
}
