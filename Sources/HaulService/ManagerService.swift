import DBusKit
import HaulCore

/// `org.haul.Haul1.Manager`: validates transfer requests. Transfers themselves are not implemented yet, so
/// a valid request is answered with `org.freedesktop.DBus.Error.NotSupported`; there are no tasks to list,
/// suspend, resume or cancel.
enum ManagerService {
    static func exportedInterface() -> DBusExportedInterface {
        DBusExportedInterface(
            HaulInterfaces.manager,
            methods: [
                "Download": { call in try download(call.arguments, options: [:]) },
                "DownloadWithOptions": { call in try download(call.arguments, options: try vardict(call.arguments[2])) },
                "Upload": { call in try upload(call.arguments, options: [:]) },
                "UploadWithOptions": { call in try upload(call.arguments, options: try vardict(call.arguments[2])) },
                "ListTasks": { _ in [.objectPaths([])] },
                "SuspendAll": { _ in [] },
                "ResumeAll": { _ in [] },
                "CancelAll": { _ in [] },
            ]
        )
    }

    private static func download(_ arguments: [DBusValue], options: [String: DBusValue]) throws -> [DBusValue] {
        _ = try request { () throws(TransferRequestError) in
            (try TransferURL(arguments[0].stringValue ?? ""), try LocalPath(arguments[1].stringValue ?? ""))
        }
        _ = try TransferOptionsDecoder.download(options)
        throw DBusError.notSupported("transfers are not implemented in this version of hauld yet")
    }

    private static func upload(_ arguments: [DBusValue], options: [String: DBusValue]) throws -> [DBusValue] {
        _ = try request { () throws(TransferRequestError) in
            (try TransferURL(arguments[0].stringValue ?? ""), try LocalPath(arguments[1].stringValue ?? ""))
        }
        _ = try TransferOptionsDecoder.upload(options)
        throw DBusError.notSupported("transfers are not implemented in this version of hauld yet")
    }

    private static func vardict(_ value: DBusValue) throws(DBusError) -> [String: DBusValue] {
        guard let dictionary = value.stringDictionary else {
            throw HaulErrorName.invalidArgument.error("options have a duplicate key")
        }
        return dictionary.mapValues { $0.unwrappedVariant }
    }
}

/// Runs request validation, turning its errors into the contract's error names.
func request<T>(_ body: () throws(TransferRequestError) -> T) throws(DBusError) -> T {
    do {
        return try body()
    } catch .unsupportedScheme(let scheme) {
        throw HaulErrorName.unsupportedScheme.error(TransferRequestError.unsupportedScheme(scheme).description)
    } catch {
        throw HaulErrorName.invalidArgument.error(error.description)
    }
}

extension DBusValue {
    /// An `a{sv}` entry's value without its variant wrapper.
    var unwrappedVariant: DBusValue { if case .variant(let inner) = self { inner } else { self } }
}
