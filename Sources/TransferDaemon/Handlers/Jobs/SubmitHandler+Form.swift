import TransferCore
import TransferProtocol

extension RequestRouter {
    /// An upload with `form`: its spool copy is replaced by the `multipart/form-data` body around
    /// the file, and the submit goes on as a plain upload of that body (POST unless a method is
    /// given, not resumable, the form's Content-Type). The expected SHA-256 is the file's, so it
    /// is checked here, against the copy of the file itself.
    func framingForm(_ params: Submit.Params, peer: Peer) async throws(RPCError) -> Submit.Params {
        guard let parts = params.form else { return params }
        func refuse(_ name: String, _ message: String) -> RPCError { RPCError(CoreError(.invalidParameter(name), message)) }
        guard params.kind == JobKind.upload.rawValue else {
            throw refuse("form", "form applies to uploads only (\"kind\": \"upload\"): leave it out")
        }
        do { try MultipartForm.validate(parts) } catch { throw RPCError(error) }
        guard let spool = manager.spool, let name = params.spool else { return params }
        if params.contentType != nil || (params.headers ?? [:]).keys.contains(where: { $0.lowercased() == "content-type" }) {
            throw refuse("content_type", "a form upload sends its own Content-Type (multipart/form-data with its boundary): give the file's type as the content_type of its form part instead")
        }
        if let mode = params.resumable.flatMap({ ResumableMode(rawValue: $0.lowercased()) }), mode == .tus || mode == .ietf {
            throw refuse("resumable", "a form upload is sent whole, not with \(mode.rawValue): leave resumable out or give off")
        }
        guard let entry = spool.entry(name, owner: peer.uid) else { throw RPCError(Spool.notAwaitingSubmit(name)) }
        let source = params.source ?? "the file"
        if let expected = params.sha256?.lowercased(), expected != entry.sha256 {
            throw refuse("sha256", "\(source) has SHA-256 \(entry.sha256), not the expected \(expected): nothing was accepted; check the file")
        }
        let fileName = params.source.flatMap { $0.split(separator: "/").last.map(String.init) }
        let form: MultipartForm
        do {
            form = try MultipartForm(parts: parts, defaultFileName: fileName, boundary: MultipartForm.boundary(forFileDigest: entry.sha256))
        } catch {
            throw RPCError(error)
        }
        var framed = params
        framed.spool = try await Self.blocking { () throws(CoreError) in try spool.frame(name, owner: peer.uid, in: form, source: source) }.name
        framed.form = nil
        framed.sha256 = nil
        framed.contentType = form.contentType
        framed.method = params.method ?? UploadMethod.post.rawValue
        framed.resumable = ResumableMode.off.rawValue
        return framed
    }
}
