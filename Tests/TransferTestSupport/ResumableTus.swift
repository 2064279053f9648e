import NIOHTTP1

/// tus 1.0.0 (https://tus.io/protocols/resumable-upload): the core protocol with the creation
/// (and creation-with-upload) and termination extensions.
extension ResumableUploadStore {
    static func planTus(_ request: ResumableRequest, storage: inout Storage, directory: String) -> ResumablePlan {
        func fixed(_ status: Int, _ headers: [(String, String)] = [], _ why: String = "") -> ResumablePlan {
            ResumablePlan(tus: true, final: .fixed(resumableAnswer(status, headers, why)))
        }
        if request.method == .OPTIONS {
            return fixed(204, [
                ("Tus-Version", "1.0.0"), ("Tus-Extension", "creation,termination"),
                ("Tus-Max-Size", String(resumableMaxSize)),
            ])
        }
        guard request.header("Tus-Resumable") == "1.0.0" else {
            if case .resource(_, let resource) = request.route { storage.note(resource, "\(request.method.rawValue) 412") }
            return fixed(412, [("Tus-Version", "1.0.0")], "Tus-Resumable: 1.0.0 is required")
        }
        switch request.route {
        case .creation(let path):
            return planTusCreation(request, path: path, storage: &storage, directory: directory)
        case .resource(let path, let resource):
            guard let held = storage.resources[resource], !held.terminated else { return fixed(404, [], "no such upload") }
            func refuse(_ status: Int, _ headers: [(String, String)] = [], _ why: String) -> ResumablePlan {
                storage.note(resource, "\(request.method.rawValue) \(status)")
                return fixed(status, headers, why)
            }
            switch request.method {
            case .HEAD:
                let offset = storage.reportedOffset(path, resource: resource)
                storage.note(resource, "HEAD \(offset)")
                var headers = [("Upload-Offset", String(offset)), ("Cache-Control", "no-store")]
                if let length = held.record.declaredLength { headers.append(("Upload-Length", String(length))) }
                return fixed(200, headers)
            case .PATCH:
                guard request.mediaType == "application/offset+octet-stream" else {
                    return refuse(415, [], "Content-Type must be application/offset+octet-stream")
                }
                guard let offset = request.header("Upload-Offset").flatMap(parseNonNegative) else {
                    return refuse(400, [], "Upload-Offset is missing or invalid")
                }
                // An append still in flight (its client gone, its connection not yet seen closing)
                // stops here, so that the offset compared is final and the client is not refused until then.
                storage.supersede(resource)
                guard offset == held.record.offset else {
                    return refuse(409, [("Upload-Offset", String(held.record.offset))], "Upload-Offset \(offset) but \(held.record.offset) held")
                }
                if let length = held.record.declaredLength, let size = request.contentLength, offset + size > length {
                    return refuse(400, [], "the body goes past Upload-Length")
                }
                let append = storage.appendPlan(
                    resource, under: path, label: "PATCH", start: offset, limit: held.record.declaredLength, request: request,
                    rule: request.behaviour.withholdsLastByte ? .never : .atDeclaredLength)
                var plan = ResumablePlan(tus: true, resource: resource, append: append, final: .tusAppended)
                plan.withholdsLastByte = request.behaviour.withholdsLastByte
                return plan
            case .DELETE:
                storage.terminate(resource)
                storage.note(resource, "DELETE terminated")
                return fixed(204)
            default:
                return refuse(405, [("Allow", "HEAD, PATCH, DELETE, OPTIONS")], "method not allowed")
            }
        }
    }

    /// POST to the creation path: `Upload-Length` required, a body (creation-with-upload) appended.
    private static func planTusCreation(
        _ request: ResumableRequest, path: String, storage: inout Storage, directory: String
    ) -> ResumablePlan {
        func fixed(_ status: Int, _ headers: [(String, String)] = [], _ why: String) -> ResumablePlan {
            ResumablePlan(tus: true, final: .fixed(resumableAnswer(status, headers, why)))
        }
        guard request.method == .POST else { return fixed(405, [("Allow", "POST, OPTIONS")], "method not allowed") }
        guard let length = request.header("Upload-Length").flatMap(parseNonNegative) else {
            return fixed(400, [], "Upload-Length is missing or invalid")
        }
        guard length <= resumableMaxSize else { return fixed(413, [], "Upload-Length is over Tus-Max-Size") }
        if request.hasBody, request.mediaType != "application/offset+octet-stream" {
            return fixed(415, [], "a body needs Content-Type: application/offset+octet-stream")
        }
        if let size = request.contentLength, size > length { return fixed(400, [], "the body goes past Upload-Length") }
        guard let resource = storage.createResource(under: path, directory: directory, declaredLength: length)
        else { return fixed(500, [], "cannot create the upload's file") }
        let append = storage.appendPlan(
                    resource, under: path, label: "POST", start: 0, limit: length, request: request,
                    rule: .atDeclaredLength)
        return ResumablePlan(
            tus: true, resource: resource, location: (request.behaviour.locationPrefix ?? request.origin) + resource, append: append,
            final: .tusCreated)
    }
}
