extension TestHTTPServer {
    /// Serves resumable uploads at `path` (the creation / upload target) with `protocolUsed`; resources
    /// live under "\(path)/<n>" (numbered from 1 per path). Registering again replaces `behaviour` and
    /// restarts its counters; the uploads are kept. Held bytes are in temporary files removed at ``shutdown()``.
    public func acceptResumableUploads(_ path: String, protocol protocolUsed: ResumableProtocol, behaviour: ResumableBehaviour = .normal) {
        state.resumable.register(path, protocolUsed: protocolUsed, behaviour: behaviour)
    }

    /// The uploads created at `path`, in creation order.
    public func resumableUploads(for path: String) -> [ResumableUploadRecord] {
        state.resumable.records(for: path)
    }
}
