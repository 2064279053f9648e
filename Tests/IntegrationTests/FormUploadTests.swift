import Crypto
import Foundation
import Testing
import TransferProtocol
import TransferTestSupport

/// `transferctl upload -F`, as curl's: the file sent as one part of a multipart/form-data body
/// beside text fields, with a Content-Length known in advance.
@Suite struct FormUploadTests {
    @Test func theFileGoesBetweenItsFieldsInTheOrderGiven() async throws {
        let server = try await TestHTTPServer.start()
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        server.acceptUploads("/form", behaviour: .requireContentLength)
        let content = TestContent(seed: 2101, size: 5 << 20)
        let source = daemon.directory + "/photo.jpg"
        try writeContent(content, to: source)
        let note = daemon.directory + "/note.txt"
        try "from a file\n".write(toFile: note, atomically: true, encoding: .utf8)
        try await daemon.start()

        let run = try await runTransferctl([
            "upload", "--socket", daemon.socketPath, "--json", "--wait",
            "-F", "title=Größe \"1\"", "-F", "file=@\(source);type=image/jpeg;filename=cover.jpg", "-F", "note=<\(note)",
            server.url("/form"),
        ])
        #expect(run.status == 0, "\(run.stderr)")
        let job = try WireCoding.decoder().decode(Job.self, from: Data(try #require(run.stdout.split(separator: "\n").last).utf8))
        #expect(job.state == .completed)
        #expect(job.method == "POST", "-F posts, as curl's")

        let received = try #require(server.uploads(for: "/form").last)
        #expect(received.method == "POST")
        let type = try #require(received.header("Content-Type"))
        let boundary = try #require(type.components(separatedBy: "boundary=").last)
        #expect(type.hasPrefix("multipart/form-data; boundary="))
        let prefix = "--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nGröße \"1\"\r\n"
            + "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"cover.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
        let suffix = "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nfrom a file\n\r\n--\(boundary)--\r\n"
        var digest = SHA256()
        digest.update(data: Data(prefix.utf8))
        var offset: Int64 = 0
        while offset < content.size {
            let end = min(offset + (4 << 20), content.size)
            digest.update(data: content.bytes(in: offset..<end))
            offset = end
        }
        digest.update(data: Data(suffix.utf8))
        let expected = digest.finalize().map { String(format: "%02x", $0) }.joined()
        #expect(received.sha256 == expected, "the body is the fields, the file and the closing boundary, as RFC 7578 lays them out")
        #expect(received.header("Content-Length") == String(Int64(prefix.utf8.count) + content.size + Int64(suffix.utf8.count)))
        #expect(received.header("Transfer-Encoding") == nil)
        try await waitUntil("both spool copies are freed") { daemon.spoolFiles().isEmpty }
        try await server.shutdown()
    }

    @Test func aFormThatCannotBeSentIsRefusedBeforeAnythingIsAccepted() async throws {
        let daemon = try TestDaemon()
        defer { daemon.cleanUp() }
        let source = daemon.directory + "/a.bin"
        try writeContent(TestContent(seed: 2102, size: 1000), to: source)
        try await daemon.start()
        let url = "http://127.0.0.1:9/form"

        let twoFiles = try await runTransferctl(["upload", "--socket", daemon.socketPath, "-F", "a=@\(source)", "-F", "b=@\(source)", url])
        #expect(twoFiles.status == 2)
        #expect(twoFiles.stderr.contains("one upload sends one file"), "\(twoFiles.stderr)")
        let noFile = try await runTransferctl(["upload", "--socket", daemon.socketPath, "-F", "a=b", url])
        #expect(noFile.status == 2)
        #expect(noFile.stderr.contains("name=@FILE"), "\(noFile.stderr)")
        let both = try await runTransferctl(["upload", "--socket", daemon.socketPath, "-F", "a=@\(source)", source, url])
        #expect(both.status == 2)
        #expect(both.stderr.contains("with -F, give only the URL"), "\(both.stderr)")
        let typed = try await runTransferctl(["upload", "--socket", daemon.socketPath, "-F", "a=@\(source)", "--content-type", "text/plain", url])
        #expect(typed.status == 2)
        #expect(typed.stderr.contains("type=image/png"), "\(typed.stderr)")

        // Over the socket: a form on a download, and a form without the file's part.
        var download = Submit.Params(url: url, destination: daemon.destination("x"))
        download.form = [FormPart(fileNamed: "file")]
        #expect { try daemon.submit(download) } throws: { "\($0)".contains("form applies to uploads only") }
        let handed = try await daemon.upload(source, to: url, ["--not-before", "2030-01-01T00:00:00Z"])
        #expect(handed.status == 0, "\(handed.stderr)")
        #expect(try daemon.jobs().count == 1)
        var fieldsOnly = Submit.Params(url: url, destination: nil, kind: "upload", source: source, spool: "0123456789abcdef0123456789abcdef")
        fieldsOnly.form = [FormPart(name: "a", value: "b")]
        #expect { try daemon.submit(fieldsOnly) } throws: { "\($0)".contains("exactly one part with \"file\": true") }
        #expect(try daemon.jobs().count == 1, "nothing else was accepted")
    }
}
