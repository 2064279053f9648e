import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// Presigned S3 URLs against a local S3 server (moto): a PUT upload, which S3 accepts only with a
/// plain `Content-Length` body, and a download over several ranged connections.
@Suite struct S3Tests {
    @Test func presignedPutUploadAndPresignedGetDownload() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let s3 = try await S3Server()
        defer { s3.stop() }
        try await daemon.start()
        let content = TestContent(seed: 909, size: 9 << 20)
        let file = daemon.directory + "/backup.tar"
        try writeContent(content, to: file)

        let put = try await s3.run(["presign-put", "transferd-test", "backup.tar"])
        let upload = try await runTransferctl(["upload", file, put, "--resumable", "off", "--wait", "--socket", daemon.socketPath])
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(try await s3.run(["sha256", "transferd-test", "backup.tar"]) == content.sha256Hex())
        let signature = try #require(URLComponents(string: put)?.queryItems?.first { $0.name == "Signature" }?.value)
        #expect(!daemon.log.contains(signature), "the signature is not logged")

        let get = try await s3.run(["presign-get", "transferd-test", "backup.tar"])
        let job = try daemon.submit(.init(url: get, destination: daemon.destination("backup.tar")).withSegments(3))
        let ended = try await daemon.waitForTerminal(job.id, seconds: 60)
        #expect(ended.state == .completed, "\(ended.error?.message ?? "")")
        #expect(try sha256Hex(ofFile: daemon.destination("backup.tar")) == content.sha256Hex())
    }

    /// A presigned POST: S3 checks the policy fields and takes the file from the last part.
    @Test func presignedPostFormUpload() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let s3 = try await S3Server()
        defer { s3.stop() }
        try await daemon.start()
        let content = TestContent(seed: 910, size: 6 << 20)
        let file = daemon.directory + "/photo.jpg"
        try writeContent(content, to: file)

        let post = try await s3.run(["presign-post", "transferd-test", "photos/photo.jpg"]).split(separator: "\n").map(String.init)
        let url = try #require(post.first)
        let fields = post.dropFirst().flatMap { ["-F", $0] }
        let upload = try await runTransferctl(
            ["upload", "--socket", daemon.socketPath, "--wait"] + fields + ["-F", "file=@\(file);type=image/jpeg", url])
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(try await s3.run(["sha256", "transferd-test", "photos/photo.jpg"]) == content.sha256Hex())
        let signature = try #require(post.first { $0.hasPrefix("signature=") }?.dropFirst("signature=".count))
        #expect(!daemon.log.contains(String(signature)), "the policy's signature is not logged")
    }
}

private extension Submit.Params {
    func withSegments(_ segments: Int) -> Submit.Params {
        var params = self
        params.segments = segments
        return params
    }
}
