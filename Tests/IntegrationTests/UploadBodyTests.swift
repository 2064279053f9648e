import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// A plain upload's body is a stream of the spool copy whose length libcurl is given through a
/// private header: sent with `Content-Length` and never chunked, the private header never sent, and
/// the whole body sent again from byte 0 whenever the request is.
@Suite("Upload bodies")
struct UploadBodyTests {
    @Test(arguments: ["PUT", "POST"])
    func aPlainUploadIsSentWithItsLengthNeverChunked(method: String) async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon(name: "uploadBody\(method)")
        defer { daemon.cleanUp() }
        server.acceptUploads("/store", behaviour: .requireContentLength)
        let content = TestContent(seed: 2501, size: 3 << 20 + 17)
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        // A job's own header of the private name changes nothing.
        let job = try await daemon.uploadJob(
            source, to: server.url("/store"), ["-X", method, "-H", "X-Transferd-Body-Length: 5"], wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(job.bytesSent == content.size)
        let received = try #require(server.uploads(for: "/store").last)
        #expect(server.uploads(for: "/store").count == 1, "\(server.uploads(for: "/store"))")
        #expect(received.method == method)
        #expect(received.status == 201)
        #expect(received.bytes == content.size)
        #expect(received.sha256 == content.sha256Hex())
        #expect(received.header("Content-Length") == String(content.size))
        #expect(received.header("Transfer-Encoding") == nil)
        #expect(received.header("Expect") == nil, "no 100-continue to wait for")
        #expect(received.header("X-Transferd-Body-Length") == nil, "the private header is never sent: \(received.headers)")
        try await server.shutdown()
    }

    @Test func anEmptyFileIsSentWithALengthOfZero() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.acceptUploads("/store", behaviour: .requireContentLength)
        let source = daemon.directory + "/empty.bin"
        FileManager.default.createFile(atPath: source, contents: Data())
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: server.url("/store"), wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        let received = try #require(server.uploads(for: "/store").last)
        #expect(received.status == 201)
        #expect(received.bytes == 0)
        #expect(received.header("Content-Length") == "0")
        #expect(received.header("Transfer-Encoding") == nil)
        try await server.shutdown()
    }

    /// A login challenge answered with the URL's credentials sends the request again: URLSession
    /// asks for a new stream, and the whole body goes again from byte 0.
    @Test func aLoginChallengeGetsTheWholeBodyAgain() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.acceptUploads("/login", behaviour: .status(code: 401, times: 1))
        let content = TestContent(seed: 2502, size: 5 << 20)
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let url = server.url("/login").replacingOccurrences(of: "http://", with: "http://uploader:secret@")
        let job = try await daemon.uploadJob(source, to: url, wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(job.attempts == 1)
        let received = server.uploads(for: "/login")
        #expect(received.map(\.status) == [401, 201], "\(received)")
        #expect(received.map(\.bytes) == [content.size, content.size], "\(received)")
        #expect(received.allSatisfy { $0.sha256 == content.sha256Hex() }, "\(received)")
        #expect(received.allSatisfy { $0.header("Content-Length") == String(content.size) && $0.header("Transfer-Encoding") == nil })
        #expect(received.last?.header("Authorization") == "Basic " + Data("uploader:secret".utf8).base64EncodedString())
        try await server.shutdown()
    }

    /// nginx's WebDAV, which nobody here wrote, stores the PUT as sent.
    @Test func aPutToNginxWebDAVStoresTheFileExactly() async throws {
        let daemon = try TestDaemon()
        let nginx = try await Nginx(in: daemon.directory)
        defer { nginx.stop(); daemon.cleanUp() }
        let content = TestContent(seed: 2503, size: 40 << 20 + 3)
        let source = daemon.directory + "/source.bin"
        try writeContent(content, to: source)
        try await daemon.start()
        let job = try await daemon.uploadJob(source, to: nginx.url("dav/put.bin"), wait: true)
        #expect(job.state == .completed, "\(String(describing: job.error))")
        #expect(job.response?.status == 201)
        #expect(try sha256Hex(ofFile: nginx.root + "/dav/put.bin") == content.sha256Hex())
        #expect(nginx.accessLog.filter { $0.hasPrefix("PUT /dav/put.bin") } == ["PUT /dav/put.bin 201"], "\(nginx.accessLog)")
    }
}
