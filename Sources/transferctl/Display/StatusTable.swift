import TransferProtocol

/// The `status` list as an aligned text table: ID, STATE, PRIORITY, PROGRESS, SIZE, RATE, DESTINATION.
struct StatusTable {
    var jobs: [Job]

    /// The header and one line per job, columns separated by at least two spaces.
    func render() -> String {
        let header = ["ID", "STATE", "PRIORITY", "PROGRESS", "SIZE", "RATE", "DESTINATION"]
        let rows = jobs.map { job in
            [
                TerminalText.printable(job.id), job.stateText, (job.priority ?? .normal).rawValue, job.percentText, job.sizeText,
                job.rateText, TerminalText.printable(job.target),
            ]
        }
        let all = [header] + rows
        var widths = Array(repeating: 0, count: header.count)
        for row in all {
            for (column, cell) in row.enumerated() {
                widths[column] = max(widths[column], cell.count)
            }
        }
        return all.map { row in
            row.enumerated().map { column, cell in
                // The last column is not padded, so lines carry no trailing spaces.
                column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            .joined(separator: "  ")
        }
        .joined(separator: "\n")
    }
}
