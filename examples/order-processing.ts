/**
 * The example workflow of docs/workflows.md: an order with the seed's input shape, reserved,
 * charged and shipped in durable steps; a cancel releases the stock and refunds the charge.
 */
import { setTimeout as delay } from "node:timers/promises";
import { defineWorkflow } from "orbit-scheduler";

/** The seed's order input. */
export type Order = {
  order_id: string;
  customer_id: string;
  amount: number;
  items: { sku: string; quantity: number }[];
};

export const OrderProcessing = defineWorkflow<Order>({
  name: "OrderProcessing",
  version: "1.0.0",
  description: "Reserve stock, charge the customer, ship the order",
  input: {
    type: "object",
    required: ["order_id", "customer_id", "amount", "items"],
    properties: {
      order_id: { type: "string" },
      customer_id: { type: "string" },
      amount: { type: "number", minimum: 0 },
      items: {
        type: "array",
        items: {
          type: "object",
          required: ["sku", "quantity"],
          properties: { sku: { type: "string" }, quantity: { type: "integer", minimum: 1 } },
          additionalProperties: false,
        },
      },
    },
    additionalProperties: false,
  },
  retry: { maxAttempts: 3, backoffMs: 1000 },
  async run(ctx, order) {
    const reservation = await ctx.step(
      "reserve-inventory",
      async () => {
        await delay(100);
        return { reservation_id: `R-${order.order_id}`, skus: order.items.map((i) => i.sku) };
      },
      { compensate: (r) => ctx.log.info("released the reservation", { reservation: r.reservation_id }) },
    );
    const charge = await ctx.step(
      "charge-payment",
      async () => {
        await delay(100);
        return { charge_id: `C-${order.order_id}`, amount: order.amount };
      },
      { compensate: (c) => ctx.log.info("refunded the charge", { charge: c.charge_id, amount: c.amount }) },
    );
    const shipment = await ctx.step("ship", async () => {
      await delay(200);
      return { tracking: `T-${order.order_id}-${ctx.executionId.length}` };
    });
    return { order_id: order.order_id, reservation: reservation.reservation_id, charge: charge.charge_id, ...shipment };
  },
  onCancel(ctx, reason) {
    ctx.log.warn("order cancelled", { execution: ctx.executionId, reason });
  },
});
