import DBusKit
import HaulContract

/// Carries a message out on the session bus: creates the task in hauld, starts it, or withdraws it.
struct HaulHandOff {
    /// How long a call to hauld may take. The extension waits 2 s for the whole answer, the host's start included.
    static let callTimeout: Duration = .milliseconds(1500)

    /// The desktop-file id of the browser, for the task's `Application`.
    let application: String

    func perform(_ message: HostMessage) async -> HostAnswer {
        let connection: DBusConnection
        do {
            connection = try await DBusConnection.sessionBus()
        } catch {
            return .failed(error.name, error.message)
        }
        let answer: HostAnswer
        do {
            answer = try await carry(message, on: connection)
        } catch {
            answer = .failed(error.name, error.message)
        }
        await connection.close()
        return answer
    }

    private func carry(_ message: HostMessage, on connection: DBusConnection) async throws(DBusError) -> HostAnswer {
        switch message {
        case .download(let offer):
            return try await create(offer, on: connection)
        case .start(let task):
            return try await call(.resume, on: task, connection)
        case .withdraw(let task):
            _ = try await call(.cancel, on: task, connection)
            return try await call(.forget, on: task, connection)
        }
    }

    /// `DownloadWithOptions(url, "", options)`: into the user's download folder, suspended until `start`.
    private func create(_ offer: HostMessage.DownloadOffer, on connection: DBusConnection) async throws(DBusError)
        -> HostAnswer
    {
        var headers: [String: String] = [:]
        if !offer.cookies.isEmpty { headers["Cookie"] = offer.cookies }
        if !offer.referrer.isEmpty { headers["Referer"] = offer.referrer }
        if !offer.userAgent.isEmpty { headers["User-Agent"] = offer.userAgent }
        var options: [DownloadOption: DBusValue] = [.startSuspended: .boolean(true)]
        if !headers.isEmpty { options[.headers] = .stringDictionary(headers) }
        if !offer.filename.isEmpty { options[.filenameHint] = .string(offer.filename) }
        if !application.isEmpty { options[.application] = .string(application) }
        let hauld = HauldCalls(connection)
        let task = try await callHaul {
            try await hauld.download(offer.url, to: "", options: options, timeout: Self.callTimeout)
        }
        let path = try await callHaul { try await hauld.property(.path, of: task) }
        return .taken(task: task.rawValue, path: path.stringValue ?? "")
    }

    private func call(_ method: TaskMethod, on task: ObjectPath, _ connection: DBusConnection) async throws(DBusError)
        -> HostAnswer
    {
        try await callHaul { try await HauldCalls(connection).call(method, on: task, timeout: Self.callTimeout) }
        return .done(task: task.rawValue)
    }

    /// Runs a call, turning whatever it throws into a `DBusError`.
    private func callHaul<T>(_ body: () async throws -> T) async throws(DBusError) -> T {
        do {
            return try await body()
        } catch let error as DBusError {
            throw error
        } catch {
            throw DBusError.failed("\(error)")
        }
    }
}
