/** The seed's order: its input (as the seed's examples give it) and a schema that accepts it. */

export const ORDER_INPUT = {
  order_id: "R-1",
  customer_id: "cust-1",
  amount: 120.0,
  items: [{ sku: "BOOK-1", quantity: 1 }],
};

export const ORDER_SCHEMA = {
  type: "object",
  properties: {
    order_id: { type: "string" },
    customer_id: { type: "string" },
    amount: { type: "number" },
    items: { type: "array" },
  },
};
