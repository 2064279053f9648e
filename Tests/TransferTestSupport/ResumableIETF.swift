import NIOHTTP1

/// "Resumable Uploads for HTTP", draft-ietf-httpbis-resumable-upload-05 (interop version 6).
///
/// Requests to a resource are taken without `Upload-Draft-Interop-Version` (the resource URL already
/// says which protocol it speaks); a creation request needs it, as a server not knowing that version
/// would treat the request as a plain upload, and so does this one.
extension ResumableUploadStore {
    static let interopVersion = "6"

    static func planIETF(_ request: ResumableRequest, storage: inout Storage, directory: String) -> ResumablePlan {
        func fixed(_ status: Int, _ headers: [(String, String)] = [], _ why: String = "") -> ResumablePlan {
            ResumablePlan(tus: false, final: .fixed(resumableAnswer(status, headers, why)))
        }
        if request.method == .OPTIONS {
            return fixed(204, [
                ("Upload-Draft-Interop-Version", interopVersion), ("Upload-Limit", "max-size=\(resumableMaxSize)"),
            ])
        }
        switch request.route {
        case .creation(let path):
            return planIETFCreation(request, path: path, storage: &storage, directory: directory)
        case .resource(let path, let resource):
            guard let held = storage.resources[resource], !held.terminated else { return fixed(404, [], "no such upload") }
            func refuse(_ status: Int, _ headers: [(String, String)] = [], _ why: String) -> ResumablePlan {
                storage.note(resource, "\(request.method.rawValue) \(status)")
                return fixed(status, headers, why)
            }
            let record = held.record
            switch request.method {
            case .HEAD:
                let offset = storage.reportedOffset(path, resource: resource)
                storage.note(resource, "HEAD \(offset)")
                var headers = [
                    ("Upload-Offset", String(offset)), ("Upload-Complete", record.complete ? "?1" : "?0"),
                    ("Cache-Control", "no-store"),
                ]
                if let length = record.declaredLength { headers.append(("Upload-Length", String(length))) }
                return fixed(204, headers)
            case .PATCH:
                guard !record.complete else { return refuse(400, [], "the upload is complete already") }
                guard ["application/partial-upload", "application/offset+octet-stream"].contains(request.mediaType ?? "") else {
                    return refuse(415, [], "Content-Type must be application/partial-upload")
                }
                guard let offset = request.header("Upload-Offset").flatMap(parseNonNegative) else {
                    return refuse(400, [], "Upload-Offset is missing or invalid")
                }
                guard let complete = parseBoolean(request.header("Upload-Complete")) else {
                    return refuse(400, [], "Upload-Complete is missing or invalid")
                }
                // An append still in flight (its client gone, its connection not yet seen closing)
                // stops here, so that the offset compared is final and the client is not refused until then.
                storage.supersede(resource)
                guard offset == record.offset else {
                    return refuse(
                        409, [("Upload-Offset", String(record.offset)), ("Upload-Complete", "?0")],
                        "Upload-Offset \(offset) but \(record.offset) held")
                }
                var length = record.declaredLength
                if let text = request.header("Upload-Length") {
                    guard let given = parseNonNegative(text), length == nil || length == given, given <= resumableMaxSize else {
                        return refuse(400, [], "Upload-Length is invalid or differs from the one given before")
                    }
                    length = given
                }
                if let length, let size = request.contentLength, offset + size > length || (complete && offset + size != length) {
                    return refuse(400, [], "the body does not fit Upload-Length")
                }
                storage.resources[resource]?.record.declaredLength = length
                let append = storage.appendPlan(
                    resource, under: path, label: "PATCH", start: offset, limit: length, request: request,
                    rule: complete ? .now : .never)
                return ResumablePlan(tus: false, resource: resource, append: append, final: .ietfAppended(complete: complete))
            case .DELETE:
                storage.terminate(resource)
                storage.note(resource, "DELETE terminated")
                return fixed(204)
            default:
                return refuse(405, [("Allow", "HEAD, PATCH, DELETE, OPTIONS")], "method not allowed")
            }
        }
    }

    /// Upload creation (POST, PUT or PATCH to the path with `Upload-Complete`), or a plain upload without it.
    private static func planIETFCreation(
        _ request: ResumableRequest, path: String, storage: inout Storage, directory: String
    ) -> ResumablePlan {
        func fixed(_ status: Int, _ headers: [(String, String)] = [], _ why: String) -> ResumablePlan {
            ResumablePlan(tus: false, final: .fixed(resumableAnswer(status, headers, why)))
        }
        guard [.POST, .PUT, .PATCH].contains(request.method) else {
            return fixed(405, [("Allow", "POST, PUT, PATCH, OPTIONS")], "method not allowed")
        }
        let label = request.method.rawValue
        let completeHeader = request.header("Upload-Complete")
        guard let completeHeader, request.header("Upload-Draft-Interop-Version") == interopVersion else {
            // Not a resumable upload: taken whole, and kept as a completed resource for tests to see.
            guard let resource = storage.createResource(under: path, directory: directory, declaredLength: nil) else {
                return fixed(500, [], "cannot create the upload's file")
            }
            let append = storage.appendPlan(
                    resource, under: path, label: label + " plain", start: 0, limit: nil, request: request,
                    rule: .now)
            return ResumablePlan(tus: false, resource: resource, location: request.origin + resource, append: append, final: .plain)
        }
        guard let complete = parseBoolean(completeHeader) else { return fixed(400, [], "Upload-Complete is invalid") }
        var length: Int64?
        if let text = request.header("Upload-Length") {
            guard let given = parseNonNegative(text) else { return fixed(400, [], "Upload-Length is invalid") }
            length = given
        }
        if complete, length == nil { length = request.contentLength }
        if let length, length > resumableMaxSize { return fixed(413, [], "the upload is over Upload-Limit") }
        if let length, let size = request.contentLength, size > length || (complete && size != length) {
            return fixed(400, [], "the body does not fit Upload-Length")
        }
        guard let resource = storage.createResource(under: path, directory: directory, declaredLength: length) else {
            return fixed(500, [], "cannot create the upload's file")
        }
        let location = (request.behaviour.locationPrefix ?? request.origin) + resource
        var plan = ResumablePlan(
            tus: false, resource: resource, location: location,
            append: storage.appendPlan(
                    resource, under: path, label: label, start: 0, limit: length, request: request,
                    rule: complete ? .now : .never),
            final: .ietfCreated(complete: complete))
        if request.behaviour.interim104 {
            var headers = HTTPHeaders()
            headers.add(name: "Location", value: location)
            headers.add(name: "Upload-Draft-Interop-Version", value: interopVersion)
            plan.interim.append((104, headers))
        }
        return plan
    }
}
