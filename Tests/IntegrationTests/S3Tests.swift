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
}

private extension Submit.Params {
    func withSegments(_ segments: Int) -> Submit.Params {
        var params = self
        params.segments = segments
        return params
    }
}
