import Testing
import TransferProtocol
@testable import TransferCore

@Suite struct MultipartFormTests {
    @Test func partsAreLaidOutAroundTheFileInOrder() throws {
        let form = try MultipartForm(
            parts: [FormPart(name: "key", value: "a/b.jpg"), FormPart(fileNamed: "file"), FormPart(name: "x", value: "1")],
            defaultFileName: "b.jpg", boundary: "B")
        #expect(String(decoding: form.prefix, as: UTF8.self)
            == "--B\r\nContent-Disposition: form-data; name=\"key\"\r\n\r\na/b.jpg\r\n"
            + "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"b.jpg\"\r\nContent-Type: application/octet-stream\r\n\r\n")
        #expect(String(decoding: form.suffix, as: UTF8.self) == "\r\n--B\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n1\r\n--B--\r\n")
        #expect(form.contentType == "multipart/form-data; boundary=B")
    }

    @Test func quotesInNamesAreEscapedAsBrowsersDo() throws {
        let form = try MultipartForm(parts: [FormPart(fileNamed: "f\"x", filename: "a \"b\".txt", contentType: "text/plain")], defaultFileName: nil, boundary: "B")
        #expect(String(decoding: form.prefix, as: UTF8.self).contains("name=\"f%22x\"; filename=\"a %22b%22.txt\"\r\nContent-Type: text/plain"))
    }

    @Test func theBoundaryDependsOnTheFileOnly() {
        let digest = String(repeating: "ab", count: 32)
        #expect(MultipartForm.boundary(forFileDigest: digest) == MultipartForm.boundary(forFileDigest: digest))
        #expect(MultipartForm.boundary(forFileDigest: digest).count <= 70, "RFC 2046 allows at most 70 characters")
    }

    @Test(arguments: [
        ([FormPart(name: "a", value: "b")], "exactly one part"),
        ([FormPart(fileNamed: "a"), FormPart(fileNamed: "b")], "exactly one part"),
        ([FormPart(fileNamed: "")], "needs a name"),
        ([FormPart(fileNamed: "a\n")], "needs a name"),
        ([FormPart(fileNamed: "a", contentType: "text/\u{1}")], "printable ASCII"),
        ([FormPart(fileNamed: "a"), FormPart(name: "v", value: "x--Bx")], "boundary"),
    ])
    func badFormsAreRefusedNamingTheProblem(parts: [FormPart], words: String) {
        expectRefused(parts, words)
    }

    @Test func fieldsOverTheirBudgetAreRefused() {
        expectRefused([FormPart(fileNamed: "a"), FormPart(name: "v", value: String(repeating: "x", count: MultipartForm.maxFieldBytes))], "bytes")
    }

    private func expectRefused(_ parts: [FormPart], _ words: String) {
        do {
            _ = try MultipartForm(parts: parts, defaultFileName: nil, boundary: "--B")
            Issue.record("accepted: \(parts)")
        } catch {
            #expect(error.kind == .invalidParameter("form"))
            #expect(error.message.contains(words), "\(error.message)")
        }
    }
}
