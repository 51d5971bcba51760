import ArgumentParser
import DBusKit
import Foundation
import HaulContract

/// Options shared by `get` and `put`.
struct AttachOptions: ParsableArguments {
    @Flag(help: "Return at once, printing the task's object path, instead of showing progress.")
    var detach = false

    @Option(name: .customLong("header"), help: ArgumentHelp("An extra request header.", valueName: "'Name: value'"))
    var headers: [String] = []

    func validate() throws { _ = try parsedHeaders() }

    func parsedHeaders() throws -> [String: String] {
        var result: [String: String] = [:]
        for header in headers {
            guard let colon = header.firstIndex(of: ":") else {
                throw ValidationError("--header takes 'Name: value', not '\(header)'")
            }
            result[String(header[..<colon])] = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return result
    }
}

/// How `get` and `put` ask hauld to pace a transfer.
struct PacingOptions: ParsableArguments {
    @Option(
        name: .customLong("limit-rate"),
        help: ArgumentHelp(
            "The task's own limit in bytes per second, as curl's: 200K, 1.5M, 1G (1024-based), 0 or at least 4K. "
                + "hauld's limits for all transfers (`haul limit`) still apply.",
            valueName: "RATE"
        )
    )
    var limitRate: RateArgument?

    @Flag(help: "Run as a background task: after foreground ones, and not on a metered network or in power-saver mode.")
    var background = false

    @Flag(help: "May transfer on a metered network (the default for foreground tasks).")
    var allowMetered = false

    /// The `priority` and `allow-metered` options, when given.
    var priority: String? { background ? "background" : nil }
}

/// Starts a task, then either prints it (`--detach`) or follows it to the end.
func startAndFollow(
    _ client: HaulClient, detach: Bool, kind: TaskKindName, start: () async throws -> ObjectPath
) async throws {
    let interruption = detach ? nil : await Interruption.trap()
    let path = try await start()
    guard let interruption else {
        emit(path.rawValue)
        return
    }
    let watcher = TaskWatcher(client: client)
    switch try await interruption.detachable({ try await watcher.watch([path]) }) {
    case .detached:
        let id = path.rawValue.split(separator: "/").last ?? "?"
        FileHandle.standardError.write(Data("""
            \nhaul: detached; the \(kind.rawValue) goes on as task \(id).
            haul: `haul watch \(id)` follows it again, `haul cancel \(id)` stops it.\n
            """.utf8))
        throw ExitCode(130)
    case .finished(let tasks):
        if let task = tasks.first { try task.throwUnlessSucceeded() }
    }
}

struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get", abstract: "Download a URL into a file, showing progress (Ctrl-C detaches).",
        discussion: """
            Without -o, or with -o naming a folder (or ending in /), hauld names the file as a browser would, from \
            the server's Content-Disposition, else the last segment of the final URL, never replacing a file \
            (curl -OJ, wget --content-disposition). The file is written as NAME.haul-partial and renamed into \
            place when complete and verified.
            """
    )

    @Argument(help: "An http or https URL.")
    var url: String

    @Option(
        name: .shortAndLong,
        help: "The file to save to, or a folder to save into (default: the current folder, under the name hauld chooses)."
    )
    var output: String?

    @Option(help: ArgumentHelp("The SHA-256 the file must have.", valueName: "HEX"))
    var sha256: String?

    @Flag(help: "Replace an existing file.")
    var overwrite = false

    @Flag(help: "Create the task suspended.")
    var suspended = false

    @Option(
        name: [.customShort("x"), .customLong("connections")],
        help: ArgumentHelp(
            "Connections to use, 1 to 16 (aria2's -x; default: hauld's DefaultConnections). Servers that cap each "
                + "connection's speed serve a file split in segments faster.",
            valueName: "N"
        )
    )
    var connections: UInt32?

    @OptionGroup var pacing: PacingOptions
    @OptionGroup var attach: AttachOptions

    func validate() throws {
        let range = DownloadOption.connectionRange
        if let connections, !range.contains(connections) {
            throw ValidationError("--connections must be between \(range.lowerBound) and \(range.upperBound)")
        }
    }

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            var options: [DownloadOption: DBusValue] = [
                .overwrite: .boolean(overwrite), .startSuspended: .boolean(suspended),
            ]
            if let sha256 { options[.sha256] = .string(sha256) }
            if let connections { options[.connections] = .uint32(connections) }
            if let rate = pacing.limitRate { options[.rateLimit] = .uint64(rate.bytesPerSecond) }
            if let priority = pacing.priority { options[.priority] = .string(priority) }
            if pacing.allowMetered { options[.allowMetered] = .boolean(true) }
            let headers = try attach.parsedHeaders()
            if !headers.isEmpty { options[.headers] = .stringDictionary(headers) }
            let destination = absolute(output ?? "./")
            try await startAndFollow(client, detach: attach.detach || suspended, kind: .download) {
                try await client.startTask(
                    .downloadWithOptions, [.string(url), .string(destination), .vardict(options.byName)]
                )
            }
        }
    }
}

struct PutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "put", abstract: "Upload a file to a URL (PUT, or POST), showing progress (Ctrl-C detaches)."
    )

    @Argument(help: "The file to send.")
    var file: String

    @Argument(help: "An http or https URL.")
    var url: String

    @Flag(help: "Send with POST instead of PUT.")
    var post = false

    @OptionGroup var pacing: PacingOptions
    @OptionGroup var attach: AttachOptions

    func run() async throws {
        try await reportingFailures {
            let client = try await HaulClient.connect()
            let method: UploadMethodName = post ? .post : .put
            var options: [UploadOption: DBusValue] = [.method: .string(method.rawValue)]
            if let rate = pacing.limitRate { options[.rateLimit] = .uint64(rate.bytesPerSecond) }
            if let priority = pacing.priority { options[.priority] = .string(priority) }
            if pacing.allowMetered { options[.allowMetered] = .boolean(true) }
            let headers = try attach.parsedHeaders()
            if !headers.isEmpty { options[.headers] = .stringDictionary(headers) }
            try await startAndFollow(client, detach: attach.detach, kind: .upload) {
                try await client.startTask(
                    .uploadWithOptions, [.string(url), .string(absolute(file)), .vardict(options.byName)]
                )
            }
        }
    }
}

/// A path made absolute against the current folder (hauld has its own), a trailing `/` kept (a folder for hauld).
func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}
