import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A plain upload's body: a stream of the spool copy, whose length the request names in a private
/// header. FoundationNetworking gives libcurl no length for a stream, and libcurl then sends it
/// chunked, which S3-style servers refuse; CLinuxShims (curl_options.c) hands the header's length
/// to libcurl instead, which then sends `Content-Length` and a plain body, and never sends the header.
enum BodyLength {
    /// The private header; curl_options.c knows it by the same name.
    static let header = "X-Transferd-Body-Length"

    /// Names `length` as the length of `request`'s streamed body.
    static func add(_ length: Int64, to request: inout URLRequest) {
        request.setValue(String(length), forHTTPHeaderField: header)
    }

    /// Whether `name` is the private header (a job's own headers may not set it).
    static func isPrivate(_ name: String) -> Bool {
        name.caseInsensitiveCompare(header) == .orderedSame
    }

    /// Whether `request` is sent with a streamed body of a named length.
    static func isNamed(in request: URLRequest?) -> Bool {
        request?.value(forHTTPHeaderField: header) != nil
    }

    /// A new stream of the spool copy at `path`, from byte 0. URLSession asks for one each time it
    /// sends the request: the first time, again after answering a login challenge, and when libcurl
    /// sends it again on a new connection because a reused one had closed.
    static func stream(ofFileAt path: String) -> InputStream {
        // Read by FoundationNetworking as libcurl asks, in bounded pieces, each dropped from the
        // page cache once read (`SpoolBodyStream`). A copy that cannot be opened reads as empty:
        // the server never gets the length named, and the request ends at the idle timeout; the
        // next attempt's check then finds the copy missing.
        SpoolBodyStream(path: path)
    }
}
