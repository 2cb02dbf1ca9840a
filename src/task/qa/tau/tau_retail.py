"""τ-bench's retail tools, ported for hone from the rules of sierra-research/tau-bench (envs/retail/tools).

Each tool takes the database (`data`: orders, products, users) and the agent's arguments, may change the database,
and returns the observation text, word for word as τ-bench returns it (json.dumps of the record it changed, or an
"Error: ..." line). The functions carry τ-bench's qualified names (`CancelPendingOrder.invoke`), so a call with a
missing or unknown argument fails with the same TypeError text.
"""
import json

from tau_common import calculate, named

STATUS_ERROR = {"pending": "Error: non-pending order cannot be", "delivered": "Error: non-delivered order cannot be"}


def _order(data, order_id, status, verb):
    """The order, or the error text when it is missing or not in `status`."""
    orders = data["orders"]
    if order_id not in orders:
        return None, "Error: order not found"
    order = orders[order_id]
    if order["status"] != status:
        return None, "%s %s" % (STATUS_ERROR[status], verb)
    return order, None


def _missing_items(order, item_ids):
    held = [item["item_id"] for item in order["items"]]
    return next((i for i in item_ids if item_ids.count(i) > held.count(i)), None)


def _price_difference(data, order, item_ids, new_item_ids):
    """The price change of swapping items for variants of the same product, or the error text."""
    products = data["products"]
    diff = 0
    for item_id, new_id in zip(item_ids, new_item_ids):
        item = [i for i in order["items"] if i["item_id"] == item_id][0]
        variants = products[item["product_id"]]["variants"]
        if not (new_id in variants and variants[new_id]["available"]):
            return None, "Error: new item %s not found or available" % new_id
        diff += variants[new_id]["price"] - item["price"]
    return diff, None


@named("Calculate")
def calculate_tool(data, expression):
    return calculate(expression)


@named("CancelPendingOrder")
def cancel_pending_order(data, order_id, reason):
    order, error = _order(data, order_id, "pending", "cancelled")
    if error:
        return error
    if reason not in ["no longer needed", "ordered by mistake"]:
        return "Error: invalid reason"
    refunds = []
    for payment in order["payment_history"]:
        method_id = payment["payment_method_id"]
        refunds.append({"transaction_type": "refund", "amount": payment["amount"], "payment_method_id": method_id})
        if "gift_card" in method_id:
            method = data["users"][order["user_id"]]["payment_methods"][method_id]
            method["balance"] += payment["amount"]
            method["balance"] = round(method["balance"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return json.dumps(order)


@named("ExchangeDeliveredOrderItems")
def exchange_delivered_order_items(data, order_id, item_ids, new_item_ids, payment_method_id):
    order, error = _order(data, order_id, "delivered", "exchanged")
    if error:
        return error
    missing = _missing_items(order, item_ids)
    if missing is not None:
        return "Error: %s not found" % missing
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    diff, error = _price_difference(data, order, item_ids, new_item_ids)
    if error:
        return error
    diff = round(diff, 2)
    methods = data["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < diff:
        return "Error: insufficient gift card balance to pay for the price difference"
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff
    return json.dumps(order)


@named("FindUserIdByEmail")
def find_user_id_by_email(data, email):
    for user_id, profile in data["users"].items():
        if profile["email"].lower() == email.lower():
            return user_id
    return "Error: user not found"


@named("FindUserIdByNameZip")
def find_user_id_by_name_zip(data, first_name, last_name, zip):
    for user_id, p in data["users"].items():
        name = p["name"]
        if (
            name["first_name"].lower() == first_name.lower()
            and name["last_name"].lower() == last_name.lower()
            and p["address"]["zip"] == zip
        ):
            return user_id
    return "Error: user not found"


def _lookup(table, what):
    def look(data, key):
        return json.dumps(data[table][key]) if key in data[table] else "Error: %s not found" % what

    return look


@named("GetOrderDetails")
def get_order_details(data, order_id):
    return _lookup("orders", "order")(data, order_id)


@named("GetProductDetails")
def get_product_details(data, product_id):
    return _lookup("products", "product")(data, product_id)


@named("GetUserDetails")
def get_user_details(data, user_id):
    return _lookup("users", "user")(data, user_id)


@named("ListAllProductTypes")
def list_all_product_types(data):
    names = {p["name"]: p["product_id"] for p in data["products"].values()}
    return json.dumps(dict(sorted(names.items())))


def _address(address1, address2, city, state, country, zip):
    return {"address1": address1, "address2": address2, "city": city, "state": state, "country": country, "zip": zip}


@named("ModifyPendingOrderAddress")
def modify_pending_order_address(data, order_id, address1, address2, city, state, country, zip):
    order, error = _order(data, order_id, "pending", "modified")
    if error:
        return error
    order["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(order)


@named("ModifyPendingOrderItems")
def modify_pending_order_items(data, order_id, item_ids, new_item_ids, payment_method_id):
    order, error = _order(data, order_id, "pending", "modified")
    if error:
        return error
    missing = _missing_items(order, item_ids)
    if missing is not None:
        return "Error: %s not found" % missing
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    diff, error = _price_difference(data, order, item_ids, new_item_ids)
    if error:
        return error
    methods = data["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < diff:
        return "Error: insufficient gift card balance to pay for the new item"
    order["payment_history"].append(
        {"transaction_type": "payment" if diff > 0 else "refund", "amount": abs(diff), "payment_method_id": payment_method_id}
    )
    if method["source"] == "gift_card":
        method["balance"] -= diff
        method["balance"] = round(method["balance"], 2)
    variants = data["products"]
    for item_id, new_id in zip(item_ids, new_item_ids):
        item = [i for i in order["items"] if i["item_id"] == item_id][0]
        variant = variants[item["product_id"]]["variants"][new_id]
        item["item_id"] = new_id
        item["price"] = variant["price"]
        item["options"] = variant["options"]
    order["status"] = "pending (item modified)"
    return json.dumps(order)


@named("ModifyPendingOrderPayment")
def modify_pending_order_payment(data, order_id, payment_method_id):
    order, error = _order(data, order_id, "pending", "modified")
    if error:
        return error
    methods = data["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    history = order["payment_history"]
    if len(history) > 1 or history[0]["transaction_type"] != "payment":
        return "Error: there should be exactly one payment for a pending order"
    old_id = history[0]["payment_method_id"]
    if old_id == payment_method_id:
        return "Error: the new payment method should be different from the current one"
    amount = history[0]["amount"]
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < amount:
        return "Error: insufficient gift card balance to pay for the order"
    history.extend(
        [
            {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
            {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
        ]
    )
    if method["source"] == "gift_card":
        method["balance"] -= amount
        method["balance"] = round(method["balance"], 2)
    if "gift_card" in old_id:
        old = methods[old_id]
        old["balance"] += amount
        old["balance"] = round(old["balance"], 2)
    return json.dumps(order)


@named("ModifyUserAddress")
def modify_user_address(data, user_id, address1, address2, city, state, country, zip):
    users = data["users"]
    if user_id not in users:
        return "Error: user not found"
    users[user_id]["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(users[user_id])


@named("ReturnDeliveredOrderItems")
def return_delivered_order_items(data, order_id, item_ids, payment_method_id):
    order, error = _order(data, order_id, "delivered", "returned")
    if error:
        return error
    if payment_method_id not in data["users"][order["user_id"]]["payment_methods"]:
        return "Error: payment method not found"
    if "gift_card" not in payment_method_id and payment_method_id != order["payment_history"][0]["payment_method_id"]:
        return "Error: payment method should be either the original payment method or a gift card"
    if _missing_items(order, item_ids) is not None:
        return "Error: some item not found"
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return json.dumps(order)


@named("Think")
def think(data, thought):
    return ""


@named("TransferToHumanAgents")
def transfer_to_human_agents(data, summary):
    return "Transfer successful"


TOOLS = {
    "calculate": calculate_tool,
    "cancel_pending_order": cancel_pending_order,
    "exchange_delivered_order_items": exchange_delivered_order_items,
    "find_user_id_by_email": find_user_id_by_email,
    "find_user_id_by_name_zip": find_user_id_by_name_zip,
    "get_order_details": get_order_details,
    "get_product_details": get_product_details,
    "get_user_details": get_user_details,
    "list_all_product_types": list_all_product_types,
    "modify_pending_order_address": modify_pending_order_address,
    "modify_pending_order_items": modify_pending_order_items,
    "modify_pending_order_payment": modify_pending_order_payment,
    "modify_user_address": modify_user_address,
    "return_delivered_order_items": return_delivered_order_items,
    "think": think,
    "transfer_to_human_agents": transfer_to_human_agents,
}
DATA_FILES = {"orders": "data/orders.json", "products": "data/products.json", "users": "data/users.json"}
TERMINATE = ["transfer_to_human_agents"]


def wrong_action(task):
    """A write the task never asks for: the user's address moved somewhere else (the wrong oracle's action)."""
    address = _address("1 Wrong Way", "Unit 0", "Nowhere", "ZZ", "USA", "00000")
    return {"name": "modify_user_address", "kwargs": dict(user_id=task["user_id"], **address)}
