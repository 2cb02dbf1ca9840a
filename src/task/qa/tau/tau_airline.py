"""τ-bench's airline tools, ported for hone from the rules of sierra-research/tau-bench (envs/airline/tools).

As in tau_retail.py: each tool takes the database (flights, reservations, users) and the agent's arguments, may
change it, and returns τ-bench's observation text word for word, under τ-bench's qualified tool names.
"""
import json
from copy import deepcopy

from tau_common import calculate, named

AIRPORTS = {
    "SFO": "San Francisco", "JFK": "New York", "LAX": "Los Angeles", "ORD": "Chicago", "DFW": "Dallas",
    "DEN": "Denver", "SEA": "Seattle", "ATL": "Atlanta", "MIA": "Miami", "BOS": "Boston", "PHX": "Phoenix",
    "IAH": "Houston", "LAS": "Las Vegas", "MCO": "Orlando", "EWR": "Newark", "CLT": "Charlotte",
    "MSP": "Minneapolis", "DTW": "Detroit", "PHL": "Philadelphia", "LGA": "LaGuardia",
}  # fmt: skip


def _seat_check(data, flight, cabin, passengers):
    """Fills in a requested flight's price, origin and destination, or returns τ-bench's error for it. `passengers` is
    the list itself: τ-bench takes its len() only at the seat comparison, after the flight's own checks, so a passenger
    list of the wrong type fails there with τ-bench's error, not before."""
    number = flight["flight_number"]
    if number not in data["flights"]:
        return f"Error: flight {number} not found"
    known = data["flights"][number]
    if flight["date"] not in known["dates"]:
        return f"Error: flight {number} not found on date {flight['date']}"
    on_date = known["dates"][flight["date"]]
    if on_date["status"] != "available":
        return f"Error: flight {number} not available on date {flight['date']}"
    if on_date["available_seats"][cabin] < len(passengers):
        return f"Error: not enough seats on flight {number}"
    flight["price"] = on_date["prices"][cabin]
    flight["origin"] = known["origin"]
    flight["destination"] = known["destination"]
    return None


@named("BookReservation")
def book_reservation(
    data, user_id, origin, destination, flight_type, cabin, flights, passengers, payment_methods, total_baggages,
    nonfree_baggages, insurance,
):  # fmt: skip
    reservations, users = data["reservations"], data["users"]
    if user_id not in users:
        return "Error: user not found"
    user = users[user_id]
    reservation_id = next((r for r in ("HATHAT", "HATHAU") if r not in reservations), "HATHAV")
    reservation = {
        "reservation_id": reservation_id,
        "user_id": user_id,
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": deepcopy(flights),
        "passengers": passengers,
        "payment_history": payment_methods,
        "created_at": "2024-05-15T15:00:00",
        "total_baggages": total_baggages,
        "nonfree_baggages": nonfree_baggages,
        "insurance": insurance,
    }
    total = 0
    for flight in reservation["flights"]:
        error = _seat_check(data, flight, cabin, passengers)
        if error:
            return error
        total += flight["price"] * len(passengers)
    if insurance == "yes":
        total += 30 * len(passengers)
    total += 50 * nonfree_baggages
    for payment in payment_methods:
        pid, amount = payment["payment_id"], payment["amount"]
        if pid not in user["payment_methods"]:
            return f"Error: payment method {pid} not found"
        if user["payment_methods"][pid]["source"] in ["gift_card", "certificate"]:
            if user["payment_methods"][pid]["amount"] < amount:
                return f"Error: not enough balance in payment method {pid}"
    if sum(p["amount"] for p in payment_methods) != total:
        paid = sum(p["amount"] for p in payment_methods)
        return f"Error: payment amount does not add up, total price is {total}, but paid {paid}"
    for payment in payment_methods:
        pid, amount = payment["payment_id"], payment["amount"]
        if user["payment_methods"][pid]["source"] == "gift_card":
            user["payment_methods"][pid]["amount"] -= amount
        elif user["payment_methods"][pid]["source"] == "certificate":
            del user["payment_methods"][pid]
    reservations[reservation_id] = reservation
    user["reservations"].append(reservation_id)
    return json.dumps(reservation)


@named("Calculate")
def calculate_tool(data, expression):
    return calculate(expression)


@named("CancelReservation")
def cancel_reservation(data, reservation_id):
    reservations = data["reservations"]
    if reservation_id not in reservations:
        return "Error: reservation not found"
    reservation = reservations[reservation_id]
    refunds = [{"payment_id": p["payment_id"], "amount": -p["amount"]} for p in reservation["payment_history"]]
    reservation["payment_history"].extend(refunds)
    reservation["status"] = "cancelled"
    return json.dumps(reservation)


@named("GetReservationDetails")
def get_reservation_details(data, reservation_id):
    if reservation_id in data["reservations"]:
        return json.dumps(data["reservations"][reservation_id])
    return "Error: user not found"  # sic: τ-bench's text


@named("GetUserDetails")
def get_user_details(data, user_id):
    if user_id in data["users"]:
        return json.dumps(data["users"][user_id])
    return "Error: user not found"


@named("ListAllAirports")
def list_all_airports(data):
    return json.dumps(AIRPORTS)


def _on(flight, date):
    """The flight without its dates, with the fields of one date."""
    out = {k: v for k, v in flight.items() if k != "dates"}
    out.update(flight["dates"][date])
    return out


@named("SearchDirectFlight")
def search_direct_flight(data, origin, destination, date):
    results = []
    for flight in data["flights"].values():
        if flight["origin"] == origin and flight["destination"] == destination:
            if date in flight["dates"] and flight["dates"][date]["status"] == "available":
                results.append(_on(flight, date))
    return json.dumps(results)


@named("SearchOnestopFlight")
def search_onestop_flight(data, origin, destination, date):
    flights = data["flights"]
    results = []
    for first in flights.values():
        if first["origin"] != origin:
            continue
        for second in flights.values():
            if second["destination"] != destination or first["destination"] != second["origin"]:
                continue
            date2 = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first["scheduled_arrival_time_est"] else date
            if first["scheduled_arrival_time_est"] > second["scheduled_departure_time_est"]:
                continue
            if date in first["dates"] and date2 in second["dates"]:
                if first["dates"][date]["status"] == "available" and second["dates"][date2]["status"] == "available":
                    leg1 = _on(first, date)
                    leg1["date"] = date
                    # τ-bench fills the second leg with the fields of `date`, then labels it `date2`
                    leg2 = {k: v for k, v in second.items() if k != "dates"}
                    leg2.update(second["dates"][date])
                    leg2["date"] = date2
                    results.append([leg1, leg2])
    return json.dumps(results)


@named("SendCertificate")
def send_certificate(data, user_id, amount):
    users = data["users"]
    if user_id not in users:
        return "Error: user not found"
    user = users[user_id]
    for number in [3221322, 3221323, 3221324]:
        payment_id = f"certificate_{number}"
        if payment_id not in user["payment_methods"]:
            user["payment_methods"][payment_id] = {"source": "certificate", "amount": amount, "id": payment_id}
            return f"Certificate {payment_id} added to user {user_id} with amount {amount}."
    return None


@named("Think")
def think(data, thought):
    return ""


@named("TransferToHumanAgents")
def transfer_to_human_agents(data, summary):
    return "Transfer successful"


def _payment_for_change(data, reservation, payment_id, total):
    methods = data["users"][reservation["user_id"]]["payment_methods"]
    if payment_id not in methods:
        return None, "Error: payment method not found"
    method = methods[payment_id]
    if method["source"] == "certificate":
        return None, "Error: certificate cannot be used to update reservation"
    if method["source"] == "gift_card" and method["amount"] < total:
        return None, "Error: gift card balance is not enough"
    return method, None


@named("UpdateReservationBaggages")
def update_reservation_baggages(data, reservation_id, total_baggages, nonfree_baggages, payment_id):
    if reservation_id not in data["reservations"]:
        return "Error: reservation not found"
    reservation = data["reservations"][reservation_id]
    total = 50 * max(0, nonfree_baggages - reservation["nonfree_baggages"])
    method, error = _payment_for_change(data, reservation, payment_id, total)
    if error:
        return error
    reservation["total_baggages"] = total_baggages
    reservation["nonfree_baggages"] = nonfree_baggages
    if method["source"] == "gift_card":
        method["amount"] -= total
    if total != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total})
    return json.dumps(reservation)


@named("UpdateReservationFlights")
def update_reservation_flights(data, reservation_id, cabin, flights, payment_id):
    if reservation_id not in data["reservations"]:
        return "Error: reservation not found"
    reservation = data["reservations"][reservation_id]
    total = 0
    flights = deepcopy(flights)
    for flight in flights:
        kept = [
            f
            for f in reservation["flights"]
            if f["flight_number"] == flight["flight_number"] and f["date"] == flight["date"] and cabin == reservation["cabin"]
        ]
        if kept:
            total += kept[0]["price"] * len(reservation["passengers"])
            flight["price"] = kept[0]["price"]
            flight["origin"] = kept[0]["origin"]
            flight["destination"] = kept[0]["destination"]
            continue
        error = _seat_check(data, flight, cabin, reservation["passengers"])
        if error:
            return error
        total += flight["price"] * len(reservation["passengers"])
    total -= sum(f["price"] for f in reservation["flights"]) * len(reservation["passengers"])
    method, error = _payment_for_change(data, reservation, payment_id, total)
    if error:
        return error
    if method["source"] == "gift_card":
        method["amount"] -= total
    reservation["flights"] = flights
    if total != 0:
        reservation["payment_history"].append({"payment_id": payment_id, "amount": total})
    return json.dumps(reservation)


@named("UpdateReservationPassengers")
def update_reservation_passengers(data, reservation_id, passengers):
    if reservation_id not in data["reservations"]:
        return "Error: reservation not found"
    reservation = data["reservations"][reservation_id]
    if len(passengers) != len(reservation["passengers"]):
        return "Error: number of passengers does not match"
    reservation["passengers"] = passengers
    return json.dumps(reservation)


TOOLS = {
    "book_reservation": book_reservation,
    "calculate": calculate_tool,
    "cancel_reservation": cancel_reservation,
    "get_reservation_details": get_reservation_details,
    "get_user_details": get_user_details,
    "list_all_airports": list_all_airports,
    "search_direct_flight": search_direct_flight,
    "search_onestop_flight": search_onestop_flight,
    "send_certificate": send_certificate,
    "think": think,
    "transfer_to_human_agents": transfer_to_human_agents,
    "update_reservation_baggages": update_reservation_baggages,
    "update_reservation_flights": update_reservation_flights,
    "update_reservation_passengers": update_reservation_passengers,
}
DATA_FILES = {"flights": "data/flights.json", "reservations": "data/reservations.json", "users": "data/users.json"}
TERMINATE = ["transfer_to_human_agents"]


def wrong_action(task):
    """A write the task never asks for: a certificate sent to the user (the wrong oracle's action)."""
    return {"name": "send_certificate", "kwargs": {"user_id": task["user_id"], "amount": 999}}
