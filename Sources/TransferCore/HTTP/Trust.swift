import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Synchronization
import CLinuxShims

/// A client certificate presented to one host (`client_certificates`): PEM files the administrator
/// keeps, read by libcurl at each connection.
public struct ClientCertificate: Sendable, Equatable {
    public var host: String
    public var certificate: String
    public var key: String

    public init(host: String, certificate: String, key: String) {
        self.host = host
        self.certificate = certificate
        self.key = key
    }
}

/// Why the configured trust cannot be used.
public struct TrustError: Error, CustomStringConvertible, Sendable {
    public var description: String
}

/// The CA certificates requests trust, and the client certificates they present. FoundationNetworking
/// has no setting for either on Linux: they reach libcurl through CLinuxShims (curl_options.c).
public enum Trust {
    /// The system's CA bundle (Debian's ca-certificates).
    public static let systemBundle = "/etc/ssl/certs/ca-certificates.crt"
    /// The private header that names a request's own CA certificates; never sent.
    static let header = "X-Transferd-Trust"
    /// The most PEM bytes a job's `cacert` may hold.
    public static let maxJobPEMBytes = 64 << 10
    private static let nextToken = Atomic<UInt64>(0)

    /// Makes the system's bundle and `caFile` (PEM; "" for none) the CA certificates of every request
    /// from now on, and `clientCertificates` the certificates presented to their hosts. Read again at
    /// each reload, so a CA added to or removed from the system's store applies then.
    public static func configure(caFile: String, clientCertificates: [ClientCertificate]) throws(TrustError) {
        var pem = (try? Data(contentsOf: URL(fileURLWithPath: systemBundle))) ?? Data()
        if !caFile.isEmpty {
            guard let extra = try? Data(contentsOf: URL(fileURLWithPath: caFile)) else {
                throw TrustError(description: "ca_file \(caFile) cannot be read: give a readable PEM file of CA certificates")
            }
            guard isPEM(String(decoding: extra, as: UTF8.self)) else {
                throw TrustError(description: "ca_file \(caFile) holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
            }
            pem.append(10)
            pem.append(extra)
        }
        for entry in clientCertificates {
            for (what, path) in [("certificate", entry.certificate), ("key", entry.key)] where !FileManager.default.isReadableFile(atPath: path) {
                throw TrustError(description: "client_certificates.\(entry.host).\(what) \(path) cannot be read: give a readable PEM file")
            }
        }
        let lines = clientCertificates.map { "\($0.host.lowercased())\t\($0.certificate)\t\($0.key)" }.joined(separator: "\n")
        // Without a bundle or ca_file, libcurl keeps its own default.
        pem.withUnsafeBytes { bytes in
            clinuxshims_set_trust(
                bytes.count > 0 ? bytes.baseAddress?.assumingMemoryBound(to: CChar.self) : nil, bytes.count, lines.isEmpty ? nil : lines)
        }
    }

    /// Whether `text` holds a PEM certificate, within the size a job may give.
    public static func isPEM(_ text: String) -> Bool {
        text.utf8.count <= maxJobPEMBytes && text.contains("-----BEGIN CERTIFICATE-----") && text.contains("-----END CERTIFICATE-----")
    }

    /// Marks `request` to trust `pem` as well, until `forget(_:)` is called with the request
    /// (when its task completes). Returns false when it could not be registered.
    @discardableResult
    static func add(_ pem: String, to request: inout URLRequest, job: String) -> Bool {
        let token = "\(job.prefix(40))-\(nextToken.add(1, ordering: .relaxed).newValue)"
        let stored = pem.utf8CString.withUnsafeBufferPointer { clinuxshims_set_job_trust(token, $0.baseAddress, $0.count - 1) }
        guard stored != 0 else { return false }
        request.setValue(token, forHTTPHeaderField: header)
        return true
    }

    /// Drops what `add` registered for `request`, once its task is over.
    static func forget(_ request: URLRequest?) {
        guard let token = request?.value(forHTTPHeaderField: header) else { return }
        _ = clinuxshims_set_job_trust(token, nil, 0)
    }
}
