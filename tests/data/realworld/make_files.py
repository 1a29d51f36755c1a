"""Write the real-world spreadsheet files of this folder (run: python make_files.py).

Each file shows one layout the loaders must read as clean tables: a title row,
a two-row header with merged group cells, an unmerged group row, spacer
columns, several tables on one sheet, a CSV with a group row, and two related
tables for a join.
"""

from __future__ import annotations

import csv
from pathlib import Path

from openpyxl import Workbook

HERE = Path(__file__).parent


def regional_sales() -> None:
    """Title row, then a two-row header: Region merged down, Q1/Q2 merged across."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws["A1"] = "Regional sales 2023 (units)"
    ws.append([])
    ws["A3"], ws["B3"], ws["D3"] = "Region", "Q1", "Q2"
    ws.merge_cells("A3:A4")
    ws.merge_cells("B3:C3")
    ws.merge_cells("D3:E3")
    ws["B4"], ws["C4"], ws["D4"], ws["E4"] = "Online", "Store", "Online", "Store"
    rows = [
        ("North", 120, 340, 150, 310),
        ("South", 95, 410, 130, 390),
        ("East", 210, 180, 190, 220),
        ("West", 160, 260, 175, 240),
        ("Central", 80, 150, 60, 170),
    ]
    for r in rows:
        ws.append(list(r))
    wb.save(HERE / "regional_sales.xlsx")


def inventory() -> None:
    """An unmerged group row (group label left of blanks) over the column row."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Stock"
    ws.append([None, "Stock", None, "Price", None])
    ws.append(["Item", "Warehouse", "Shop", "Buy", "Sell"])
    for r in [
        ("Kettle", 40, 12, 15.5, 29.99),
        ("Toaster", 25, 8, 18.0, 34.5),
        ("Blender", 10, 3, 32.0, 59.0),
        ("Mixer", 0, 5, 45.0, 79.0),
        ("Juicer", 18, 0, 27.5, 49.9),
    ]:
        ws.append(list(r))
    wb.save(HERE / "inventory.xlsx")


def budget() -> None:
    """A title above the header, the table offset to B, empty spacer columns C and F."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Budget"
    ws["B1"] = "Department budget 2024"
    header = ["Department", None, "Budget", "Spent", None, "Head"]
    rows = [
        ("Marketing", None, 50000, 42000, None, "Ana Lima"),
        ("Research", None, 120000, 131000, None, "Ben Ito"),
        ("Support", None, 30000, 12500, None, "Chloe Diaz"),
        ("Sales", None, 75000, 70100, None, "Dev Patel"),
        ("Legal", None, 20000, 21000, None, "Eva Novak"),
    ]
    for i, row in enumerate([header, *rows], start=3):
        for j, value in enumerate(row, start=2):
            ws.cell(row=i, column=j, value=value)
    wb.save(HERE / "budget.xlsx")


def staff_sheet() -> None:
    """Two tables stacked on one sheet, each with a title, an empty row between them."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Staff"
    ws.append(["Employees"])
    ws.append(["Employee ID", "Name", "Team", "Salary"])
    for r in [
        (101, "Ana", "Data", 5200),
        (102, "Ben", "Web", 4800),
        (103, "Chloe", "Data", 6100),
        (104, "Dev", "Ops", 4500),
        (105, "Eva", "Web", 5000),
    ]:
        ws.append(list(r))
    ws.append([])
    ws.append([])
    ws.append(["Projects"])
    ws.append(["Project", "Lead ID", "Budget", "Status"])
    for r in [
        ("Atlas", 103, 90000, "active"),
        ("Beacon", 101, 40000, "done"),
        ("Comet", 102, 25000, "active"),
        ("Delta", 103, 60000, "planned"),
    ]:
        ws.append(list(r))
    wb.save(HERE / "staff.xlsx")


def shop() -> None:
    """Two related CSV tables: customers and their orders (join on Customer ID)."""
    customers = [
        ("Customer ID", "Customer", "City"),
        (1, "Acme Ltd", "Lyon"),
        (2, "Bolt GmbH", "Berlin"),
        (3, "Cora SA", "Lyon"),
        (4, "Dune Inc", "Austin"),
    ]
    orders = [
        ("Order ID", "Customer ID", "Product", "Amount"),
        (5001, 1, "Kettle", 120),
        (5002, 2, "Toaster", 80),
        (5003, 1, "Blender", 200),
        (5004, 3, "Mixer", 150),
        (5005, 2, "Kettle", 60),
        (5006, 1, "Juicer", 90),
    ]
    for name, rows in (("shop_customers.csv", customers), ("shop_orders.csv", orders)):
        with open(HERE / name, "w", newline="", encoding="utf-8") as f:
            csv.writer(f).writerows(rows)


def grades_csv() -> None:
    """A CSV with a group row above the column row (as exported from merged cells)."""
    rows = [
        ("", "Midterm", "", "Final", ""),
        ("Student", "Written", "Oral", "Written", "Oral"),
        ("Ana", 14, 16, 15, 17),
        ("Ben", 11, 12, 13, 10),
        ("Chloe", 18, 15, 19, 16),
        ("Dev", 9, 13, 12, 14),
    ]
    with open(HERE / "grades.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows(rows)


if __name__ == "__main__":
    regional_sales()
    inventory()
    budget()
    staff_sheet()
    shop()
    grades_csv()
