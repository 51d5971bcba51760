import DBusKit

/// The tray icon's menu as an exported ``DBusMenu`` object. Each question is answered from the menu as the bridge
/// holds it at that moment (`menu`); events for items go to `event`. Whatever a host sends — an id the menu does not
/// have, a property it lacks, any value in `data` — is answered, with `InvalidArgs` when it cannot be.
enum TrayMenuInterface {
    typealias Handler = DBusExportedInterface.MethodHandler

    static func exported(
        menu: @escaping @Sendable () async -> TrayMenu,
        event: @escaping @Sendable (TrayMenu.Item, String) async -> Void
    ) -> DBusExportedInterface {
        func answering(_ body: @escaping @Sendable (TrayMenu, [DBusValue]) async throws -> [DBusValue]) -> Handler {
            { call in
                do {
                    return try await body(await menu(), call.arguments)
                } catch let refusal as TrayMenu.Refusal {
                    throw DBusError.invalidArgs(refusal.description)
                }
            }
        }
        return DBusExportedInterface(
            DBusMenu.description,
            methods: [
                "GetLayout": answering { menu, arguments in
                    let layout = try menu.layout(
                        parent: try int32(arguments, 0), depth: try int32(arguments, 1), names: strings(arguments, 2)
                    )
                    return [.uint32(TrayMenu.revision), layout]
                },
                "GetGroupProperties": answering { menu, arguments in
                    [menu.groupProperties(ids: int32s(arguments, 0), names: strings(arguments, 1))]
                },
                "GetProperty": answering { menu, arguments in
                    let name = arguments.count > 1 ? arguments[1].stringValue ?? "" : ""
                    return [.variant(try menu.property(id: try int32(arguments, 0), name: name))]
                },
                "Event": answering { menu, arguments in
                    let item = try menu.item(try int32(arguments, 0))
                    await event(item, arguments.count > 1 ? arguments[1].stringValue ?? "" : "")
                    return []
                },
                // As libdbusmenu: the ids it does not have come back; when none of the events has an item, an error.
                "EventGroup": answering { menu, arguments in
                    var unknown: [Int32] = []
                    var known: [(TrayMenu.Item, String)] = []
                    for entry in arguments.first?.arrayValue ?? [] {
                        guard case .structure(let fields) = entry, fields.count == 4, let id = fields[0].int32Value
                        else { continue }
                        if let item = TrayMenu.Item(rawValue: id) {
                            known.append((item, fields[1].stringValue ?? ""))
                        } else {
                            unknown.append(id)
                        }
                    }
                    if known.isEmpty, !unknown.isEmpty {
                        throw TrayMenu.Refusal(description: "no menu items \(unknown)")
                    }
                    for (item, name) in known { await event(item, name) }
                    return [.array(.int32, unknown.map(DBusValue.int32))]
                },
                // The menu is always up to date: no update is ever needed before it is shown.
                "AboutToShow": answering { menu, arguments in
                    _ = try menu.item(try int32(arguments, 0))
                    return [.boolean(false)]
                },
                "AboutToShowGroup": answering { _, arguments in
                    let unknown = int32s(arguments, 0).filter { TrayMenu.Item(rawValue: $0) == nil }
                    return [.array(.int32, []), .array(.int32, unknown.map(DBusValue.int32))]
                },
            ],
            properties: [
                "Version": .uint32(DBusMenu.version),
                "TextDirection": .string("ltr"),
                "Status": .string("normal"),
                "IconThemePath": .strings([]),
            ]
        )
    }

    /// The argument at `index` as an `i`; the object server has checked the signature, so this holds.
    private static func int32(_ arguments: [DBusValue], _ index: Int) throws -> Int32 {
        guard arguments.indices.contains(index), let value = arguments[index].int32Value else {
            throw TrayMenu.Refusal(description: "argument \(index) must be an int32")
        }
        return value
    }

    private static func int32s(_ arguments: [DBusValue], _ index: Int) -> [Int32] {
        guard arguments.indices.contains(index) else { return [] }
        return arguments[index].arrayValue?.compactMap(\.int32Value) ?? []
    }

    private static func strings(_ arguments: [DBusValue], _ index: Int) -> [String] {
        guard arguments.indices.contains(index) else { return [] }
        return arguments[index].arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// `ItemsPropertiesUpdated(a(ia{sv}) updatedProps, a(ias) removedProps)` for `updates`; nothing is ever removed,
    /// as the menu sends every property.
    static func itemsPropertiesUpdated(_ updates: [TrayMenu.Update]) -> [DBusValue] {
        [
            .array(
                .structure([.int32, DBusMenu.properties]),
                updates.map { .structure([.int32($0.item.rawValue), .vardict($0.properties)]) }
            ),
            .array(.structure([.int32, .array(.string)]), []),
        ]
    }
}
